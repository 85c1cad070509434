package io.scrouter.extproc.redis;

import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.netty.channel.EventLoop;
import org.redisson.api.BatchResult;
import org.redisson.api.RBatch;
import org.redisson.api.RBucket;
import org.redisson.api.RFuture;
import org.redisson.api.RScoredSortedSet;
import org.redisson.api.RScoredSortedSetAsync;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import static io.scrouter.extproc.redis.SessionScripts.CLAIM;
import static io.scrouter.extproc.redis.SessionScripts.FIND;
import static io.scrouter.extproc.redis.SessionScripts.FIND_OR_BIND;
import static io.scrouter.extproc.redis.SessionScripts.FOLLOW_UP;
import static io.scrouter.extproc.redis.SessionScripts.MARK_LOST;
import static io.scrouter.extproc.redis.SessionScripts.RELEASE;
import static io.scrouter.extproc.redis.SessionScripts.TOUCH;

/**
 * Bindings in Redis, one key per session with native expiry ({@code SET NX PX} to bind; reads refresh the
 * expiry in a one-key script that leaves tombstones alone), far cheaper for Redis than a script-backed map.
 * See {@link RedisKeys}.
 *
 * <p>Nothing here blocks: every method returns Redisson's future as a {@link CompletableFuture}; callers
 * put their own deadline on it.
 */
public final class RedisSessionStore implements SessionStore {

    /**
     * Sessions read and marked per step of {@link #evictReplica}: a reply of about 20 KB, and a batch Redis runs in
     * a few milliseconds, each well within the Redis deadline.
     */
    public static final int EVICTION_PAGE = 500;

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final Duration idleTtl;
    private final Duration releaseGrace;
    private final LongSupplier clock;
    private final FollowUpWrites followUps;
    private final ReplicaEviction eviction;
    /** Where a new session's {@code SET} goes out, or null: through Redisson. */
    private final PipelinedConnections pipelined;
    private final EventLoop eventLoop;

    /** A store that sends each binding's index and feed writes as they come. */
    public RedisSessionStore(RedissonClient redis, RedisKeys keys, SessionTtls ttls, LongSupplier clockMillis) {
        this(redis, keys, ttls, clockMillis, Runnable::run);
    }

    /**
     * A router's store: the writes that follow bindings are sent from its event loop, each batch gathering what was
     * added within {@code gather} of its first write ({@code redis.followUpGather}).
     */
    public RedisSessionStore(RedissonClient redis, RedisKeys keys, SessionTtls ttls, LongSupplier clockMillis,
                             ScheduledExecutorService eventLoop, Duration gather) {
        this(redis, keys, ttls, clockMillis,
                new FollowUpWrites(redis, keys, eventLoop, FollowUpWrites.gathered(eventLoop, gather)), null, null);
    }

    /**
     * A router's store in single mode: a new session's {@code SET} goes out on {@code pipelined}, on the connection of
     * the loop the call is made on, and the writes that follow bindings go out on {@code eventLoop}'s connection, with
     * the next {@code SET} made on that loop or after {@code gather} ({@link PipelinedConnection}).
     */
    public RedisSessionStore(RedissonClient redis, RedisKeys keys, SessionTtls ttls, LongSupplier clockMillis,
                             EventLoop eventLoop, Duration gather, PipelinedConnections pipelined) {
        this(redis, keys, ttls, clockMillis,
                new FollowUpWrites(redis, keys, eventLoop, gather, pipelined.of(eventLoop)), pipelined, eventLoop);
    }

    /** @param followUpFlushes sends the writes that follow bindings, what was added before each run of it together */
    public RedisSessionStore(RedissonClient redis, RedisKeys keys, SessionTtls ttls, LongSupplier clockMillis,
                             Executor followUpFlushes) {
        this(redis, keys, ttls, clockMillis, new FollowUpWrites(redis, keys, followUpFlushes), null, null);
    }

    private RedisSessionStore(RedissonClient redis, RedisKeys keys, SessionTtls ttls, LongSupplier clockMillis,
                              FollowUpWrites followUps, PipelinedConnections pipelined, EventLoop eventLoop) {
        this.redis = redis;
        this.pipelined = pipelined;
        this.eventLoop = eventLoop;
        this.followUps = followUps;
        this.keys = keys;
        this.idleTtl = ttls.idle();
        this.releaseGrace = ttls.releaseGrace();
        this.clock = clockMillis;
        this.eviction = new ReplicaEviction(redis, keys, ttls.lost());
    }

    private RBucket<String> bucket(String sessionId) {
        return redis.getBucket(keys.session(sessionId), StringCodec.INSTANCE);
    }

    private RScoredSortedSet<String> index(String replicaId) {
        return redis.getScoredSortedSet(keys.replicaSessions(replicaId), StringCodec.INSTANCE);
    }

    @Override
    public CompletableFuture<Optional<Binding>> find(String sessionId) {
        String key = keys.session(sessionId);
        RFuture<String> found = redis.getScript(StringCodec.INSTANCE).evalAsync(key, RScript.Mode.READ_WRITE, FIND,
                RScript.ReturnType.VALUE, List.of(key), Long.toString(idleTtl.toMillis()));
        return found.toCompletableFuture().thenApply(v -> {
            if (v == null) {
                return Optional.empty();
            }
            Binding b = Binding.decode(v);
            if (b.state() == Binding.State.LIVE) {
                // The key's expiry moved; move the session's score in its replica's index with it, or it would
                // drop out of the replica's count while still alive. Batched with the other index writes, and not
                // waited for: the answer is the binding.
                indexAndAnnounce(sessionId, b.replicaId(), null);
            }
            return Optional.of(b);
        });
    }

    /**
     * A new session is bound by one native command, {@code SET key value NX PX ttl}: the one round trip of a new
     * session's request path, and cheaper for Redis and for this router than a script (no Lua, no script
     * arguments to copy). A key that is already there (a session bound by a peer a moment ago, one bound before
     * this router started, a released binding, a tombstone) fails the NX, and the find-or-bind script then reads,
     * refreshes or revives it in a second round trip. Each step is atomic on the one key, so the pair has the
     * script's outcome: if the key went away between the two, the script binds {@code replicaIfNew}. ({@code SET NX
     * GET} would answer both cases in one call but needs Redis 7.0, and a live binding found would still need its
     * expiry pushed back.)
     *
     * <p>The returned future is the one the caller puts its deadline on. A reply that comes after the caller stopped
     * waiting (the deadline completed the future first) is dropped, and the script is not sent: the caller refused
     * the request or placed it without the store, and its write-back overwrites what this late call bound.
     * Announced, that binding would reach the other routers' caches and send the session's later requests
     * elsewhere. (With several event loops the reply and the deadline can still cross within microseconds; with
     * one, as on a router limited to one CPU, they run one after the other.)
     */
    @Override
    public CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew) {
        CompletableFuture<Lookup> answer = new CompletableFuture<>();
        setIfAbsent(sessionId, replicaIfNew).whenComplete((bound, error) -> {
            if (error != null) {
                answer.completeExceptionally(error);
            } else if (answer.isDone()) {
                // Abandoned by the caller: nothing to index or announce, and no script to send.
            } else if (bound) {
                settle(answer, sessionId, () -> new Lookup(Binding.decode(replicaIfNew), true));
            } else {
                listScript(FIND_OR_BIND, sessionId, replicaIfNew).whenComplete((r, failed) -> {
                    if (failed != null) {
                        answer.completeExceptionally(failed);
                    } else if (!answer.isDone()) {
                        settle(answer, sessionId, () -> new Lookup(Binding.decode(String.valueOf(r.get(0))),
                                r.get(1) instanceof Number n && n.longValue() == 1));
                    }
                });
            }
        });
        return answer;
    }

    /**
     * {@code SET key value NX PX ttl}: true if it bound the session. On the pipelined connection of the calling loop
     * where there is one, carrying the follow-up batch that waits for its window on that connection.
     */
    private CompletableFuture<Boolean> setIfAbsent(String sessionId, String replica) {
        PipelinedConnection connection = pipelined == null ? null : pipelined.current(eventLoop);
        if (connection == null) {
            return bucket(sessionId).setIfAbsentAsync(replica, idleTtl).toCompletableFuture();
        }
        followUps.rideAlong(connection);
        return connection.call("SET", keys.session(sessionId), replica, "PX", Long.toString(idleTtl.toMillis()), "NX")
                .thenApply(reply -> reply != null);
    }

    /** Indexes and, if new, announces what the reply says the session is bound to, then answers with it. */
    private void settle(CompletableFuture<Lookup> answer, String sessionId, Supplier<Lookup> reply) {
        try {
            Lookup found = reply.get();
            Binding b = found.binding();
            if (b.state() == Binding.State.LIVE) {
                indexAndAnnounce(sessionId, b.replicaId(), found.created() ? b.bound() : null);
            }
            answer.complete(found);
        } catch (RuntimeException e) {
            answer.completeExceptionally(e);
        }
    }

    /** The replica's index and, for a new binding ({@code announced} not null), the feed: {@link FollowUpWrites}. */
    private void indexAndAnnounce(String sessionId, String replicaId, String announced) {
        followUps.add(sessionId, replicaId, expiry(), announced);
    }

    @Override
    public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replica) {
        // The request path's call: SET NX for a new session, the find-or-bind script for a key already there.
        return findOrBind(sessionId, replica).thenApply(Lookup::binding);
    }

    @Override
    public CompletableFuture<Binding> claim(String sessionId, String replica) {
        String replicaId = Binding.replicaIdOf(replica);
        return listScript(CLAIM, sessionId, replica).thenCompose(reply -> {
            Binding held = Binding.decode(String.valueOf(reply.get(0)));
            String replaced = String.valueOf(reply.get(1));
            if (held.lost()) {
                return CompletableFuture.completedFuture(held);
            }
            String replacedId = replaced.isEmpty() ? "" : Binding.replicaIdOf(replaced);
            CompletableFuture<?> unindex = replacedId.isEmpty() || replacedId.equals(replicaId)
                    ? CompletableFuture.completedFuture(null)
                    : followUps.inOrder(() -> index(replacedId).removeAsync(sessionId).toCompletableFuture());
            return unindex.thenApply(x -> {
                indexAndAnnounce(sessionId, replicaId, replica);
                return held;
            });
        });
    }

    @Override
    public CompletableFuture<Boolean> touch(String sessionId, String replica) {
        String key = keys.session(sessionId);
        String replicaId = Binding.replicaIdOf(replica);
        RFuture<Long> refreshed = redis.getScript(StringCodec.INSTANCE).evalAsync(key, RScript.Mode.READ_WRITE,
                TOUCH, RScript.ReturnType.LONG, List.of(key), replica, Long.toString(idleTtl.toMillis()));
        return refreshed.toCompletableFuture().thenApply(r -> {
            if (r == null || r == 0L) {
                return false;
            }
            // As in find: the index follows the key's new expiry, in the next batch of index writes.
            indexAndAnnounce(sessionId, replicaId, null);
            return true;
        });
    }

    @Override
    public CompletableFuture<Void> release(String sessionId, String replica) {
        String key = keys.session(sessionId);
        RFuture<Long> released = redis.getScript(StringCodec.INSTANCE).evalAsync(key, RScript.Mode.READ_WRITE,
                RELEASE, RScript.ReturnType.LONG, List.of(key), replica, Long.toString(releaseGrace.toMillis()));
        return released.toCompletableFuture()
                .thenCompose(d -> d != null && d == 1L
                        ? followUps.inOrder(() -> index(Binding.replicaIdOf(replica)).removeAsync(sessionId)
                                .toCompletableFuture())
                        : CompletableFuture.completedFuture(false))
                .thenApply(x -> null);
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
        return countLiveAndRecent(replicaIds, idleTtl.toMillis()).thenApply(Counts::live);
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds,
                                                              long recentWithinMillis) {
        return countLiveAndRecent(replicaIds, recentWithinMillis).thenApply(Counts::recent);
    }

    @Override
    public CompletableFuture<Counts> countLiveAndRecent(Collection<String> replicaIds, long recentWithinMillis) {
        if (replicaIds.isEmpty()) {
            return CompletableFuture.completedFuture(new Counts(Map.of(), Map.of()));
        }
        List<String> ids = new ArrayList<>(replicaIds);
        return followUps.inOrder(() -> countBoth(ids, recentWithinMillis));
    }

    /** Both counts in one pipelined batch: one round trip per poll. */
    private CompletableFuture<Counts> countBoth(List<String> ids, long recentWithinMillis) {
        long now = clock.getAsLong();
        // A member's score is its session's expiry, the last push plus the idle TTL: pushed within the window
        // means a score above now + idleTtl - window (and above now: not expired).
        double pushedAfter = Math.max(now, now + idleTtl.toMillis() - recentWithinMillis);
        RBatch batch = redis.createBatch();
        for (String id : ids) {
            RScoredSortedSetAsync<String> set = batch.getScoredSortedSet(keys.replicaSessions(id),
                    StringCodec.INSTANCE);
            // Trim expired members as we go, so the index stays as small as the live sessions.
            set.removeRangeByScoreAsync(Double.NEGATIVE_INFINITY, true, now, true);
            set.countAsync(now, false, Double.POSITIVE_INFINITY, true);
            set.countAsync(pushedAfter, false, Double.POSITIVE_INFINITY, true);
        }
        return batch.executeAsync().toCompletableFuture().thenApply((BatchResult<?> result) -> {
            List<?> responses = result.getResponses();
            Map<String, Long> live = new HashMap<>();
            Map<String, Long> recent = new HashMap<>();
            for (int i = 0; i < ids.size(); i++) {
                live.put(ids.get(i), responses.get(3 * i + 1) instanceof Number n ? n.longValue() : 0L);
                recent.put(ids.get(i), responses.get(3 * i + 2) instanceof Number n ? n.longValue() : 0L);
            }
            return new Counts(live, recent);
        });
    }

    @Override
    public CompletableFuture<Long> evictReplica(String replica) {
        // A session bound to the replica just now must be marked too: read the index once its ZADD is in.
        return followUps.answered().thenCompose(x -> eviction.evict(replica));
    }

    /**
     * Loads every script into Redis's script cache and opens the connection pool: the scripts run as EVALSHA, and
     * a script Redis has not seen costs its first caller an extra round trip (NOSCRIPT, then a load).
     */
    @Override
    public CompletableFuture<Void> prepare() {
        RScript scripts = redis.getScript(StringCodec.INSTANCE);
        List<CompletableFuture<String>> loads = new ArrayList<>();
        for (String script : List.of(FIND, FIND_OR_BIND, CLAIM, TOUCH, MARK_LOST, RELEASE, FOLLOW_UP)) {
            loads.add(scripts.scriptLoadAsync(script).toCompletableFuture());
        }
        return CompletableFuture.allOf(loads.toArray(new CompletableFuture[0]));
    }

    @Override
    public CompletableFuture<String> epoch() {
        RBucket<String> marker = redis.getBucket(keys.epoch(), StringCodec.INSTANCE);
        String mine = UUID.randomUUID().toString();
        // One GET in the steady state; on an empty Redis the first router to SET NX names the new data set and
        // the others read what it wrote.
        return marker.getAsync().toCompletableFuture().thenCompose(current -> current != null
                ? CompletableFuture.completedFuture(current)
                : marker.setIfAbsentAsync(mine).toCompletableFuture().thenCompose(set -> set
                        ? CompletableFuture.completedFuture(mine) : marker.getAsync().toCompletableFuture()));
    }

    /** Runs a one-key script on the session's key with the idle TTL as its last argument. */
    private CompletableFuture<List<Object>> listScript(String script, String sessionId, String replica) {
        String key = keys.session(sessionId);
        RFuture<List<Object>> reply = redis.getScript(StringCodec.INSTANCE).evalAsync(key, RScript.Mode.READ_WRITE,
                script, RScript.ReturnType.LIST, List.of(key), replica, Long.toString(idleTtl.toMillis()));
        return reply.toCompletableFuture();
    }

    private double expiry() {
        return clock.getAsLong() + idleTtl.toMillis();
    }
}
