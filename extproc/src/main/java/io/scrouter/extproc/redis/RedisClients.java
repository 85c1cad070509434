package io.scrouter.extproc.redis;

import io.netty.channel.EventLoopGroup;
import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.RouterConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisAuthRequiredException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.RedisWrongPasswordException;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.BaseConfig;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Builds the Redisson client with deadlines that suit a request path, for each {@code redis.mode}, and
 * refuses to start with a password Redis rejects.
 *
 * <p>Redisson's defaults (3 s timeout, several retries with back-off) can hold a call for tens of seconds
 * when Redis hangs; Envoy waits at most its ext_proc message timeout (200 ms by default). So: one attempt,
 * the configured timeout, and lazy connection so the router starts (and serves from its fallback) even
 * while Redis is down.
 */
public final class RedisClients {

    private static final Logger LOG = LoggerFactory.getLogger(RedisClients.class);

    /**
     * How often a cluster client re-reads the slot map. Redisson's default is 5 s; until it re-reads, every
     * call for the slots of a master that failed over still goes to the dead master and fails, although the
     * cluster promoted its replica. Measured in {@code RedisClusterTest} (4 interleaved runs each): the
     * router's client reached the promoted replica 1.0-4.0 s after the failover with 5 s, 0.2-1.0 s with 1 s.
     */
    static final int CLUSTER_SCAN_MILLIS = 1000;

    private RedisClients() {
    }

    /**
     * @throws ConfigException naming {@code redis.password} when Redis answers but refuses the password (or
     *                         its absence). Redis being unreachable is not an error here: the router starts
     *                         and uses Redis once it is up.
     */
    public static RedissonClient create(RouterConfig.Redis settings) {
        return create(settings, null);
    }

    /**
     * @param eventLoops the event loops for Redis connections, shared with the gRPC server so that a decision
     *                   waiting on Redis continues on the thread that read the request; null: Redisson's own
     */
    public static RedissonClient create(RouterConfig.Redis settings, EventLoopGroup eventLoops) {
        Config config = new Config();
        if (eventLoops != null) {
            config.setEventLoopGroup(eventLoops);
            // Listeners (the binding feed's channel) run on the loop that read the message, not on a pool thread
            // woken once per message: every new session's announcement comes back to every router. They only
            // update the near-cache, which never blocks.
            config.setExecutor(eventLoops);
        }
        config.setCodec(StringCodec.INSTANCE);
        config.setLazyInitialization(true);
        // EVALSHA instead of sending each script's text on every call: the scripts run on the request path.
        config.setUseScriptCache(true);
        config.setNettyThreads(4);
        config.setThreads(2);
        if (settings.password() != null) {
            config.setPassword(settings.password());
        }
        int timeout = (int) settings.timeout().toMillis();
        int commandTimeout = eventLoops == null ? timeout : backstopMillis(timeout);
        switch (settings.mode()) {
            case SENTINEL -> {
                var s = config.useSentinelServers().setMasterName(settings.masterName()).setDatabase(settings.database());
                settings.addresses().forEach(s::addSentinelAddress);
                s.setCheckSentinelsList(false);
                // Reads go to the master too (Redisson reads from replicas by default): a replica is there to take
                // over, and a hung one must not stall pool reads, counts and the binding feed until Sentinel
                // declares it down (down-after-milliseconds, 30 s by default).
                s.setReadMode(ReadMode.MASTER);
                tune(s, commandTimeout, timeout);
            }
            case CLUSTER -> {
                var c = config.useClusterServers();
                settings.addresses().forEach(c::addNodeAddress);
                // Reads on the masters, as for Sentinel: a replica hung or lagging must not decide what routers see.
                c.setReadMode(ReadMode.MASTER);
                c.setScanInterval(CLUSTER_SCAN_MILLIS);
                tune(c, commandTimeout, timeout);
            }
            case SINGLE -> tune(config.useSingleServer().setAddress(settings.addresses().get(0))
                    .setDatabase(settings.database()).setConnectionMinimumIdleSize(8).setConnectionPoolSize(64),
                    commandTimeout, timeout);
        }
        RedissonClient client = Redisson.create(config);
        try {
            checkCredentials(client, settings);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
        return client;
    }

    /**
     * Redisson's own per-command timeout when the router's event loops keep its deadlines: a backstop behind
     * {@code redis.timeout}. Redisson fires its timeouts on a timer thread of its own, which a stall of the loop
     * (a GC pause, a backlog) does not hold up; at {@code redis.timeout} it would fail calls whose reply is waiting,
     * unread, in the socket, and the router would take its own pause for a Redis outage. Every store call the
     * router waits on carries the loop's deadline ({@code SystemTime.onLoops}); the writes that follow bindings and
     * the feed's reads, which carry none, wait at most this long on a hung Redis.
     */
    static int backstopMillis(int timeout) {
        return 4 * timeout;
    }

    private static void tune(BaseConfig<?> c, int commandTimeout, int timeout) {
        c.setTimeout(commandTimeout);
        c.setConnectTimeout(connectTimeoutMillis(timeout));
        c.setRetryAttempts(0);
        c.setPingConnectionInterval(1000);
    }

    /** How long opening a connection may take: the call deadline, but at least a second. */
    static int connectTimeoutMillis(int timeout) {
        return Math.max(timeout, 1000);
    }

    /**
     * Calls Redis once at start: a password Redis refuses is a configuration mistake, and without this check
     * it would show only as "Unable to connect to Redis server" on every call while the router falls back for
     * ever. A call that times out is repeated (a cold client on a busy machine can miss its first deadlines
     * while connecting), until {@link #startCheckMillis}; a refused connection is not: Redis is down, and the
     * router starts at once and uses Redis once it is up.
     */
    private static void checkCredentials(RedissonClient client, RouterConfig.Redis settings) {
        int timeout = (int) settings.timeout().toMillis();
        long attemptBound = connectTimeoutMillis(timeout) + 2L * timeout;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startCheckMillis(timeout));
        Throwable last;
        do {
            try {
                client.getBucket(new RedisKeys(settings.keyPrefix()).epoch(), StringCodec.INSTANCE).isExistsAsync()
                        .toCompletableFuture().get(attemptBound, TimeUnit.MILLISECONDS);
                return;
            } catch (ExecutionException e) {
                ConfigException refused = refusal(e, settings);
                if (refused != null) {
                    throw refused;
                }
                last = e.getCause();
            } catch (TimeoutException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        } while (timedOut(last) && System.nanoTime() < deadline);
        LOG.warn("Redis at {} did not answer at start ({}); starting anyway, Redis is used once it answers",
                settings.addresses(), String.valueOf(last));
    }

    /** How long start-up may wait for Redis's first answer: three attempts of a connection and two calls. */
    private static long startCheckMillis(int timeout) {
        return 3L * (connectTimeoutMillis(timeout) + 2L * timeout);
    }

    private static boolean timedOut(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException || t instanceof RedisTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The configuration error an authentication failure means, or null for any other failure. Looks through
     * causes and suppressed exceptions, which Redisson links in cycles, so each is visited once.
     */
    private static ConfigException refusal(Throwable error, RouterConfig.Redis settings) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Throwable> next = new ArrayDeque<>(List.of(error));
        while (!next.isEmpty()) {
            Throwable t = next.pop();
            if (!seen.add(t)) {
                continue;
            }
            String message = String.valueOf(t.getMessage());
            if (t instanceof RedisWrongPasswordException || message.contains("WRONGPASS")) {
                return new ConfigException("redis.password", "was refused by Redis at " + settings.addresses()
                        + " (WRONGPASS): set the password Redis expects (its requirepass), in the file or in "
                        + "SCROUTER_REDIS_PASSWORD");
            }
            if (t instanceof RedisAuthRequiredException || message.contains("NOAUTH")) {
                return new ConfigException("redis.password", "is not set, but Redis at " + settings.addresses()
                        + " requires one (NOAUTH): set it in the file or in SCROUTER_REDIS_PASSWORD");
            }
            if (message.contains("without any password configured")) {
                return new ConfigException("redis.password", "is set, but Redis at " + settings.addresses()
                        + " has no password and refused it: remove redis.password (and SCROUTER_REDIS_PASSWORD)");
            }
            if (t.getCause() != null) {
                next.push(t.getCause());
            }
            for (Throwable suppressed : t.getSuppressed()) {
                next.push(suppressed);
            }
        }
        return null;
    }
}
