package io.scrouter.extproc.config;

import io.scrouter.extproc.pool.ReplicaState;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The whole configuration, typed and validated. Built only by {@link ConfigLoader}; every value here has
 * passed its range check, so the rest of the service does not re-validate.
 */
public record RouterConfig(Server server, Optional<Redis> redis, Pool pool, Probe probe, Sessions sessions,
                           Placement placement, Admin admin, Metrics metrics, Optional<Groups> groups) {

    /**
     * The ext_proc gRPC server.
     *
     * @param decisionDeadline      bounds one decision, Redis included
     * @param drainPeriod           after SIGTERM, how long the router keeps answering while reporting
     *                              NOT_SERVING, so Envoy stops opening streams to it before it stops
     * @param maxBufferedBodyBytes  the most request-body bytes Envoy buffers and sends in one message for a
     *                              request without the session header (its HTTP/2 {@code
     *                              initial_stream_window_size}); larger body messages are refused clearly
     * @param warmUp                run the decision path before reporting ready, so Envoy's first requests are
     *                              not the ones that load classes and open Redis connections
     */
    public record Server(String bindAddress, int port, Duration decisionDeadline, Duration drainPeriod,
                         int maxBufferedBodyBytes, boolean warmUp) {
    }

    /**
     * The shared store. Absent means the embedded default: an in-memory store, good for one router only.
     *
     * @param mode      how the addresses are used: one server, sentinels, or cluster seed nodes
     * @param addresses {@code redis://host:port} (or {@code rediss://}); several for sentinel and cluster
     * @param keyPrefix prefix of every key, so several routers' deployments can share one Redis
     * @param calls     deadlines and the circuit breaker of the router's calls to it
     * @param followUpGather how long the writes that follow a new binding (its replica's index, its announcement to
     *                  the other routers) are gathered before they go out in one call. Longer costs each router less
     *                  per new session, and leaves a session created just before Redis hangs known to its own
     *                  router alone for that much longer (README, "When things fail")
     */
    public record Redis(RedisMode mode, List<String> addresses, String masterName, String password, int database,
                        String keyPrefix, StoreCalls calls, Duration followUpGather) {

        /** {@code redis.followUpGather} unless set. */
        public static final Duration DEFAULT_FOLLOW_UP_GATHER = Duration.ofMillis(1);

        /**
         * The longest {@code redis.followUpGather}. At 5 ms a batch already carried about twenty new sessions at 4 in
         * flight (loadtest/README.md, "What does change it: batches per session"), so a longer window saves little
         * and widens the exposure above in proportion.
         */
        public static final Duration MAX_FOLLOW_UP_GATHER = Duration.ofMillis(20);

        /** Deadline of one Redis call (also the client's own command timeout). */
        public Duration timeout() {
            return calls.timeout();
        }

        @Override
        public String toString() {
            // The password must never reach a log line.
            return "Redis[mode=" + mode + ", addresses=" + addresses + ", masterName=" + masterName
                    + ", password=" + (password == null ? "none" : "***") + ", database=" + database
                    + ", keyPrefix=" + keyPrefix + ", calls=" + calls + ", followUpGather=" + followUpGather + "]";
        }
    }

    /** How {@code redis.addresses} are used. */
    public enum RedisMode {
        /** One server (a primary, or a proxy in front of a group). */
        SINGLE,
        /** Sentinels that name the current master of {@code redis.masterName}. */
        SENTINEL,
        /** Seed nodes of a Redis Cluster. */
        CLUSTER;

        /** The mode named in a configuration file, any case; empty for anything else. */
        public static Optional<RedisMode> parse(String text) {
            for (RedisMode m : values()) {
                if (m.name().equalsIgnoreCase(text.trim())) {
                    return Optional.of(m);
                }
            }
            return Optional.empty();
        }
    }

    /**
     * The router's calls to its session store. The defaults here are the only ones: the embedded store uses
     * them as they are, and {@code redis.*} keys start from them.
     *
     * @param timeout           deadline of one call on the request path; it must fit inside Envoy's ext_proc
     *                          message timeout
     * @param settleAfterOutage after the store fails a call, new sessions keep being placed by rendezvous this
     *                          long, so routers that notice the outage (or its end) at slightly different
     *                          moments still agree
     * @param breakerFailures   consecutive failed requests that open the circuit breaker: new sessions are then
     *                          placed without waiting on the store
     * @param breakerCoolDown   while the breaker is open, one trial call per this long finds out the store is back
     */
    public record StoreCalls(Duration timeout, Duration settleAfterOutage, int breakerFailures,
                             Duration breakerCoolDown) {

        public static final StoreCalls DEFAULTS = new StoreCalls(Duration.ofMillis(50), Duration.ofSeconds(5), 3,
                Duration.ofSeconds(1));
    }

    /** How the router calls its session store: Redis's settings, or the defaults for the embedded store. */
    public StoreCalls storeCalls() {
        return redis.map(Redis::calls).orElse(StoreCalls.DEFAULTS);
    }

    /**
     * Where replicas come from: the Redis instance store, polled, or a static list when Redis is absent.
     *
     * @param departureGrace how long a replica must be missing from the instance store before it leaves the
     *                       pool (and its sessions are declared lost); covers a Redis that restarted empty or
     *                       failed over, until the publishers' next renewal puts the entries back
     */
    public record Pool(Duration pollInterval, List<StaticReplica> staticReplicas, Duration departureGrace) {
    }

    /** A replica declared in the configuration file (embedded mode). */
    public record StaticReplica(String id, String grpc, String metricsUrl, ReplicaState state, String group) {
    }

    /**
     * Replica groups: which replicas each request may use, by the group Envoy sets from the caller's
     * authenticated identity. Absent means no groups: every request may use every replica.
     *
     * @param allow                 request group -> the replica groups its new sessions may be placed in, in
     *                              order: the next is used when every ready replica of the one before is full
     *                              (or there is none); known sessions must be on one of them
     * @param withoutGroup          the request group of a request that carries none, or empty to refuse such
     *                              requests
     * @param maxSessionsPerReplica replica group -> the most live sessions one of its replicas takes (absent: no
     *                              cap)
     */
    public record Groups(Map<String, List<String>> allow, Optional<String> withoutGroup,
                         Map<String, Long> maxSessionsPerReplica) {
    }

    /** Load probes against each replica's Spark REST API. */
    public record Probe(Duration interval, Duration timeout, Duration staleAfter) {
    }

    /**
     * @param idleTtl          a session idle longer than this expires
     * @param refreshEvery     how often a busy session's idle timer is pushed to the store (not per request)
     * @param nearCacheMaxSize bound on sessions held in each router's memory
     * @param lostTtl          how long a session whose replica left the pool keeps getting a clear error
     * @param releaseGrace     how long a binding outlives a {@code ReleaseSession} (see
     *                         {@code SessionStore#release}): late RPCs of the session still reach its replica
     */
    public record Sessions(Duration idleTtl, Duration refreshEvery, long nearCacheMaxSize, Duration lostTtl,
                           Duration releaseGrace) {
    }

    /** The placement policy for new sessions and its tunables. */
    public record Placement(String policy, double utilisationWeight, double sessionWeight, long sessionCap,
                            double ewmaAlpha) {
    }

    /** The operator's admin view (pool, sessions, health); loopback by default. Port -1 turns it off. */
    public record Admin(String bindAddress, int port) {
    }

    /** Prometheus metrics endpoint ({@code /metrics}); all interfaces by default, for scraping. -1 turns it off. */
    public record Metrics(String bindAddress, int port) {
    }
}
