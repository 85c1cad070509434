package io.scrouter.extproc.redis;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Regression, found by the Cluster failover test: a router that placed a session by rendezvous while Redis
 * was unreachable wrote it back only once a request-path call closed its breaker. A router that then got no
 * request for a new session kept the breaker open for ever, so the placement never reached Redis, and the
 * session's next request, served by another router, was placed afresh (and could move). The README promises
 * the write-back on the next pool poll; this holds it to that with no traffic at all after the outage.
 */
class QuietRouterWritesBackAfterOutageTest {

    @Test
    void placementMadeDuringAnOutageReachesRedisWithoutAnotherRequest() throws Exception {
        assumeTrue(RedisProcess.installed(), "skipped: no redis-server binary (this test starts a real Redis); "
                + "install the Debian package redis-server, as bin/test does");
        try (RedisProcess redis = RedisProcess.start();
             TopologyRig rig = new TopologyRig("redis: {address: \"" + redis.address() + "\", timeout: 250ms, keyPrefix: "
                     + TopologyRig.PREFIX + ", settleAfterOutage: 1s}", key -> (String) redis.reply("GET", key))) {
            RouterServer a = rig.startRouter();
            RouterServer b = rig.startRouter();
            rig.await("both pools read", () -> a.pool().snapshot().size() == TopologyRig.REPLICAS
                    && b.pool().snapshot().size() == TopologyRig.REPLICAS);
            ExtProcClient envoyA = rig.envoyFor(a);

            String session = UUID.randomUUID().toString();
            String upstream;
            redis.pause();
            try {
                // The router answers UNAVAILABLE until repeated failures open its breaker, then places by rendezvous.
                upstream = rig.route(envoyA, "ExecutePlan", session);
                assertThat(a.routing().store().breakerOpen()).as("A's breaker open after the failed calls").isTrue();
            } finally {
                redis.resume();
            }
            String replica = rig.replicaAt(upstream).id();

            // No request reaches A from now on: only its own polls can write the placement back.
            Duration bound = rig.redisSettings().calls().settleAfterOutage().plus(rig.loopBound());
            TopologyRig.awaitWithin(bound, "the outage placement of " + session + " written to Redis",
                    () -> {
                        try {
                            return replica.equals(rig.storedBinding(session));
                        } catch (java.io.IOException e) {
                            return false;
                        }
                    });
            // So the session's next request, reaching the other router, stays where it is.
            assertThat(rig.route(rig.envoyFor(b), "AnalyzePlan", session)).isEqualTo(upstream);
        }
    }
}
