package io.scrouter.extproc.redis;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.redis.SentinelGroup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Routers in {@code redis.mode: sentinel} over a real Sentinel group on loopback (a master, a replica, three
 * sentinels): routing, agreement, the binding feed and session counts; a hung replica that must not hold up
 * routing; then the master killed, the sentinels promoting the replica, and routing and new bindings resuming
 * on it.
 *
 * <p>The group is shared by the class to keep the run short; the failover destroys the master, so it runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisSentinelTest {

    /** Sentinel's {@code down-after-milliseconds} when a configuration does not set it. */
    private static final Duration SENTINEL_DEFAULT_DOWN_AFTER = Duration.ofSeconds(30);
    private static SentinelGroup group;

    @BeforeAll
    static void startGroup() throws Exception {
        assumeTrue(RedisProcess.installed(), "skipped: no redis-server binary (these tests start a real Sentinel "
                + "group); install the Debian package redis-server, as bin/test does");
        group = SentinelGroup.start();
    }

    @AfterAll
    static void stopGroup() throws Exception {
        if (group != null) {
            group.close();
        }
    }

    @BeforeEach
    void emptyMaster() throws Exception {
        if (group.master().isAlive()) {
            group.master().reply("FLUSHALL");
        }
    }

    /** The process the sentinels name as master now. */
    private static RedisProcess currentMaster() throws IOException {
        int port = group.reportedMasterPort();
        if (port == group.master().port()) {
            return group.master();
        }
        if (port == group.replica().port()) {
            return group.replica();
        }
        throw new IOException("the sentinels do not agree on a master (reported port " + port + ")");
    }

    private static TopologyRig rig() throws Exception {
        String sentinels = group.sentinelAddresses().stream().map(a -> "\"" + a + "\"")
                .collect(Collectors.joining(", "));
        return new TopologyRig("redis: {mode: sentinel, addresses: [" + sentinels + "], masterName: "
                + SentinelGroup.MASTER_NAME + ", timeout: 250ms, keyPrefix: " + TopologyRig.PREFIX
                + ", settleAfterOutage: 1s}", key -> (String) currentMaster().reply("GET", key));
    }

    @Test
    @Order(1)
    void twoRoutersRouteAgreeAndCount() throws Exception {
        try (TopologyRig rig = rig()) {
            new RoutingChecks(rig, rig.startRouter(), rig.startRouter()).all();
        }
    }

    /**
     * The replica is there for failover, not for the routers to depend on: while it hangs (SIGSTOP), the pool
     * must still be read, sessions bound and counted, all on the master. The sentinels get Sentinel's default
     * detection time (30 s) meanwhile, so that they do not take the hung replica out of service first: in
     * production a hang shorter than that is never flagged.
     */
    @Test
    @Order(2)
    void aHungReplicaDoesNotHoldUpRouting() throws Exception {
        try (TopologyRig rig = rig()) {
            RouterServer a = rig.startRouter();
            RouterServer b = rig.startRouter();
            rig.await("both pools read", () -> a.pool().snapshot().size() == TopologyRig.REPLICAS
                    && b.pool().snapshot().size() == TopologyRig.REPLICAS);
            ExtProcClient envoyA = rig.envoyFor(a);
            // Connections to both servers exist before the pause, as they would in production.
            String warm = UUID.randomUUID().toString();
            String warmUpstream = rig.route(envoyA, "Config", warm);
            group.downAfter(SENTINEL_DEFAULT_DOWN_AFTER);
            group.replica().pause();
            try {
                // Warming: it shows the pool is read, and takes no session, so every answer below is r0..r2.
                Replica joined = new Replica("r-joined", "127.0.0.1:27098", rig.rest(0).url(), ReplicaState.WARMING);
                rig.publish(joined);
                for (RouterServer rs : List.of(a, b)) {
                    rig.await("the replica published during the pause in the pool",
                            () -> joined.equals(rs.pool().snapshot().get("r-joined")));
                }
                String session = UUID.randomUUID().toString();
                String upstream = rig.route(envoyA, "ExecutePlan", session);
                String replicaId = rig.replicaAt(upstream).id();
                assertThat(rig.storedBinding(session)).isEqualTo(replicaId);
                long expected = upstream.equals(warmUpstream) ? 2 : 1;
                rig.await("router B to count " + expected + " session(s) on " + replicaId,
                        () -> b.counts().get(replicaId) == expected);
            } finally {
                group.replica().resume();
                group.downAfter(SentinelGroup.DOWN_AFTER);
            }
        }
    }

    @Test
    @Order(3)
    void masterKilledReplicaPromotedAndRoutingResumes() throws Exception {
        try (TopologyRig rig = rig()) {
            RouterServer a = rig.startRouter();
            RouterServer b = rig.startRouter();
            ExtProcClient envoyA = rig.envoyFor(a);
            ExtProcClient envoyB = rig.envoyFor(b);
            rig.await("both pools read", () -> a.pool().snapshot().size() == TopologyRig.REPLICAS
                    && b.pool().snapshot().size() == TopologyRig.REPLICAS);
            Map<String, String> before = new LinkedHashMap<>();
            for (int i = 0; i < 6; i++) {
                String session = UUID.randomUUID().toString();
                before.put(session, rig.route(envoyA, "ExecutePlan", session));
            }
            // Replication is asynchronous: only what the replica acknowledged can survive the master.
            group.awaitReplicated();

            Duration promotion = group.killMasterAndAwaitPromotion(rig.loopBound());
            System.out.println("sentinel promotion took " + promotion.toMillis() + " ms");
            long promotedAt = System.nanoTime();
            // Routing resumes: the routers that lived through the failover follow the sentinels to the new master
            // and bind new sessions there (at first by rendezvous, written back once they reach it).
            for (int i = 0; i < 3; i++) {
                String session = UUID.randomUUID().toString();
                String expected = rig.replicaAt(rig.route(envoyA, "ExecutePlan", session, resumeAttempts(rig))).id();
                TopologyRig.awaitWithin(resumeBound(rig), "binding of " + session + " on the promoted replica",
                        () -> expected.equals(TopologyRig.replicaIdOf(get(group.replica(), rig.sessionKey(session)))));
            }
            System.out.println("sentinel: new bindings reached Redis again " + (System.nanoTime() - promotedAt) / 1_000_000
                    + " ms after the promotion");
            // A router started now finds the new master through the sentinels and reads the old bindings there.
            RouterServer c = rig.startRouter();
            ExtProcClient envoyC = rig.envoyFor(c);
            for (Map.Entry<String, String> e : before.entrySet()) {
                assertThat(rig.route(envoyC, "AnalyzePlan", e.getKey())).as("session %s via a new router",
                        e.getKey()).isEqualTo(e.getValue());
                assertThat(rig.route(envoyB, "AnalyzePlan", e.getKey())).isEqualTo(e.getValue());
            }
            // And the two routers that lived through it agree again on new sessions.
            new RoutingChecks(rig, a, b).routersAgreeOnSimultaneousNewSessions(12, () -> UUID.randomUUID().toString());
        }
    }

    private static String get(RedisProcess node, String key) {
        try {
            return (String) node.reply("GET", key);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * After a failover the routers' client must follow the sentinels to the new master, and new sessions are
     * placed by rendezvous for {@code redis.settleAfterOutage} and written back on a later poll: bound that by
     * the settle time plus the loops' bound.
     */
    private static Duration resumeBound(TopologyRig rig) {
        return rig.redisSettings().calls().settleAfterOutage().plus(rig.loopBound());
    }

    private static int resumeAttempts(TopologyRig rig) {
        return (int) (resumeBound(rig).toMillis() / rig.config().pool().pollInterval().toMillis());
    }
}
