package io.scrouter.extproc.redis;

/**
 * The Lua scripts of {@link RedisSessionStore}, each one atomic on one session key. Every non-live binding starts
 * with '!' ({@code !lost:}, {@code !released:}), which replica ids cannot contain, so the scripts tell them apart
 * from a live binding by its first character.
 */
public final class SessionScripts {

    private SessionScripts() {
    }

    // Read and refresh a live binding; a tombstone keeps its own (lost-TTL) expiry. GETEX alone would
    // stretch tombstones to the idle TTL.
    static final String FIND = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, 1) ~= '!' then
              redis.call('PEXPIRE', KEYS[1], ARGV[1])
            end
            return v""";

    // Read a binding (refreshing a live one, reviving a released one) or, if there is none, create it: one round
    // trip either way. The announcement is sent by the caller once it has the answer, never by the script: a call
    // that timed out (a hung Redis) may run when Redis resumes, and its binding is then overwritten by the
    // router's write-back; announced from here, it would have reached the other routers' caches first.
    public static final String FIND_OR_BIND = """
            local v = redis.call('GET', KEYS[1])
            if v then
              if string.sub(v, 1, 1) ~= '!' then
                redis.call('PEXPIRE', KEYS[1], ARGV[2])
                return {v, 0}
              end
              if string.sub(v, 1, 10) == '!released:' then
                local r = string.sub(v, 11)
                redis.call('SET', KEYS[1], r, 'PX', ARGV[2])
                return {r, 0}
              end
              return {v, 0}
            end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            return {ARGV[1], 1}""";

    // Overwrite a live or released binding (never a tombstone); returns the value in force and the replica of
    // the one replaced.
    static final String CLAIM = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, 6) == '!lost:' then
              return {v, v}
            end
            redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
            if v and string.sub(v, 1, 10) == '!released:' then
              v = string.sub(v, 11)
            end
            return {ARGV[1], v or ''}""";

    // Compare-and-refresh: only push back the expiry of a binding that still names the same replica; a binding
    // released from that replica is revived (the session is in use after all).
    static final String TOUCH = """
            local v = redis.call('GET', KEYS[1])
            if v == ARGV[1] then
              return redis.call('PEXPIRE', KEYS[1], ARGV[2])
            end
            if v == '!released:' .. ARGV[1] then
              redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
              return 1
            end
            return 0""";

    // A batch of announcements, as RedisBindingFeed reads them: KEYS[1] is the feed's stream; ARGV[1] is the feed's
    // channel, ARGV[2] the entries the stream keeps (approximately), ARGV[3] the stream entry's field and ARGV[4] the
    // announcements, one per line. Each is appended to the stream as one entry; then the whole batch is published as
    // one message: first the id of the stream's last entry before the batch ('0-0' for an empty stream, '-' when it
    // could not be read), then one line per announcement, '<entry id> <announcement>' ('-' for an entry Redis
    // refused). The script is atomic, so the message lists every entry the stream gained between that first id and
    // its own last: a router whose position is at or past the first id has, with this message, heard everything up
    // to its last id, and reads nothing from the stream for it. Each write stands alone (pcall): a refused append
    // (out of memory, a key of the wrong type) still leaves the announcement on the channel.
    private static final String ANNOUNCE_BATCH = """
            if ARGV[4] ~= '' then
              local before = '-'
              local tail = redis.pcall('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
              if type(tail) == 'table' and tail.err == nil then
                before = tail[1] and tail[1][1] or '0-0'
              end
              local heard = {before}
              for m in string.gmatch(ARGV[4], '[^\\n]+') do
                local id = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', ARGV[3], m)
                if type(id) ~= 'string' then
                  id = '-'
                end
                heard[#heard + 1] = id .. ' ' .. m
              end
              redis.pcall('PUBLISH', ARGV[1], table.concat(heard, '\\n'))
            end
            """;

    // The announcements alone (ANNOUNCE_BATCH), for a Redis Cluster, where the indexes live on other servers.
    static final String ANNOUNCE = ANNOUNCE_BATCH + "return 0";

    // The writes that follow bindings, a batch of them in one call (FollowUpWrites): the announcements as
    // ANNOUNCE_BATCH takes them (KEYS[1], ARGV[1..4]), then the replicas' indexes, KEYS[2..], and for each index in
    // KEYS order one argument of score and member pairs separated by spaces. Packed so, a batch is five or six
    // arguments however many sessions it carries: the Redis client's work per argument (a buffer, a copy, a type
    // check) cost more than the rest of the call (loadtest/README.md, "The follow-up batch in a few arguments").
    // Neither a message nor a member holds a line break, and a member no space: session ids are UUIDs, and replica
    // ids and driver identities exclude both (ReplicaAddress, Replica). Each write stands alone (pcall), as in a
    // pipeline: one that Redis refuses does not stop the others. Runs only where every key lives on one server
    // (single and Sentinel modes).
    static final String FOLLOW_UP = ANNOUNCE_BATCH + """
            for k = 2, #KEYS do
              local zargs = {}
              for w in string.gmatch(ARGV[3 + k], '%S+') do
                zargs[#zargs + 1] = w
              end
              redis.pcall('ZADD', KEYS[k], unpack(zargs))
            end
            return 0""";

    // Compare-and-mark: a session still bound to the departed driver (or, for an old binding that names no
    // driver, to its plain id) becomes a tombstone.
    static final String MARK_LOST = """
            local v = redis.call('GET', KEYS[1])
            if v and (v == ARGV[1] or v == ARGV[4]) then
              redis.call('SET', KEYS[1], '!lost:' .. v, 'PX', ARGV[3])
              return 1
            end
            return 0""";

    // Compare-and-release: a binding still naming the replica keeps routing there for the release grace, marked
    // so that it neither counts nor has its expiry pushed back by clean-up calls.
    static final String RELEASE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('SET', KEYS[1], '!released:' .. ARGV[1], 'PX', ARGV[2])
              return 1
            end
            return 0""";
}
