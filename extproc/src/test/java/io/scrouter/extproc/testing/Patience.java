package io.scrouter.extproc.testing;

import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.routing.Routing;

import java.time.Duration;

/**
 * How long a test may wait for something the configuration under test makes happen: every bound here is a sum
 * of configured durations (a probe interval and its timeout, a poll interval, an entry's lifetime, a Redis
 * deadline...) times {@link #ROOM}. So a bound follows the configuration when it changes, and a test stays
 * green on a small CI box whose cores are taken by other work. Waiting longer than needed costs nothing when
 * the condition comes true early; only a broken run pays the whole bound.
 *
 * <p>None of these is an assertion about time. A test whose subject is a deadline asserts that deadline itself,
 * from the configuration, and says so where it does.
 */
public final class Patience {

    /**
     * How many times slower than its configuration the system under test may run on a starved machine. Two
     * cores shared with three busy loops give each runnable thread well under half a core, and a Redis round
     * trip crosses three or four threads (router, redis-server, the client's event loop), each of which may wait
     * a scheduler period for the CPU. Override with {@code -Dscrouter.test.room=N}.
     */
    public static final int ROOM = Integer.getInteger("scrouter.test.room", 10);

    /**
     * Production's Redis deadline ({@code redis.timeout}, 50 ms) with {@link #ROOM}: what a router under test
     * uses when its subject is not that deadline. A loaded machine misses 50 ms often enough that the breaker
     * would open on a healthy Redis and the test would be about a Redis outage it did not cause.
     */
    public static final Duration REDIS_TIMEOUT = of(RouterConfig.StoreCalls.DEFAULTS.timeout());

    /** Production's decision deadline keeps three times the Redis deadline (150 ms : 50 ms); so does this one. */
    public static final Duration DECISION_DEADLINE = REDIS_TIMEOUT.multipliedBy(3);

    /** One answer of a router that runs the default decision deadline ({@code server.decisionDeadline}). */
    public static final Duration ANSWER = of(ConfigLoader.withDefaults().server().decisionDeadline());

    private Patience() {
    }

    /** The sum of the nominal durations, times {@link #ROOM}. */
    public static Duration of(Duration first, Duration... more) {
        Duration sum = first;
        for (Duration d : more) {
            sum = sum.plus(d);
        }
        return sum.multipliedBy(ROOM);
    }

    /**
     * Until the next probe of every replica has finished (a fresh sample, or a failure counted): it starts within
     * one interval and ends within its timeout.
     */
    public static Duration probeRound(RouterConfig c) {
        return of(c.probe().interval(), c.probe().timeout());
    }

    /** One Redis call: the configured deadline (none without Redis: the embedded store answers at once). */
    public static Duration storeCall(RouterConfig c) {
        return of(redisTimeout(c));
    }

    /** One decision: the deadline the router promises Envoy. */
    public static Duration decision(RouterConfig c) {
        return of(c.server().decisionDeadline());
    }

    /**
     * Until a change in the instance store (a replica joined, changed state, was removed) is in the pool: the
     * next poll starts within one interval and reads the replica index, then the entries.
     */
    public static Duration poolChange(RouterConfig c) {
        return of(c.pool().pollInterval(), pollRead(c));
    }

    /**
     * Until a replica whose entry was last renewed now has left the pool: the entry's lifetime, then the
     * departure grace, then a poll.
     */
    public static Duration departure(RouterConfig c, Duration entryLifetime) {
        return of(entryLifetime, c.pool().departureGrace(), c.pool().pollInterval(), pollRead(c));
    }

    /**
     * Until the session counts reflect the store: they are re-read after every pool poll, with four store
     * deadlines for the read.
     */
    public static Duration countsRefresh(RouterConfig c) {
        return of(c.pool().pollInterval(), pollRead(c), redisTimeout(c).multipliedBy(4));
    }

    /**
     * Until a request answered by a router reaches the other routers' memory or the store in the background
     * (an index write, a write-back on the next poll, the binding feed): one poll and a store call.
     */
    public static Duration backgroundWrite(RouterConfig c) {
        return of(c.pool().pollInterval(), redisTimeout(c));
    }


    /**
     * Until a router uses a Redis that came back (resumed, or restarted empty): the breaker's next trial call,
     * a reconnect (Redisson's connect timeout, {@code redis.timeout} but at least 1 s in {@code RedisClients}),
     * then the next poll, which starts the write-backs.
     */
    public static Duration storeReturn(RouterConfig c) {
        Duration connect = redisTimeout(c).compareTo(Duration.ofSeconds(1)) > 0 ? redisTimeout(c) : Duration.ofSeconds(1);
        return of(c.storeCalls().breakerCoolDown(), connect, c.pool().pollInterval(), redisTimeout(c));
    }

    /**
     * Until a router's store breaker opens on a Redis that stopped answering: {@code redis.breaker.failures}
     * request-path calls fail, each at its deadline, while traffic keeps coming (one decision at most between
     * them).
     */
    public static Duration breakerOpens(RouterConfig c) {
        return of(redisTimeout(c).multipliedBy(c.storeCalls().breakerFailures()), c.server().decisionDeadline());
    }

    /** Writing {@code sessions} bindings back to the store, paced, each call within a Redis deadline. */
    public static Duration writeBacks(RouterConfig c, int sessions) {
        return of(redisTimeout(c).multipliedBy(sessions / Routing.WRITE_BACKS_IN_FLIGHT + 1));
    }

    private static Duration pollRead(RouterConfig c) {
        return redisTimeout(c).multipliedBy(4);
    }

    private static Duration redisTimeout(RouterConfig c) {
        return c.redis().map(RouterConfig.Redis::timeout).orElse(Duration.ZERO);
    }
}
