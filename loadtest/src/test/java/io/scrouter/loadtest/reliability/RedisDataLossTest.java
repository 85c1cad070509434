package io.scrouter.loadtest.reliability;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.loadtest.reliability.LocalCluster;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README, "When things fail", "Redis restarted empty": the epoch marker changes, and every router writes the
 * live sessions it holds back to the store. Here no request reaches those sessions after the restart, so only
 * that rewrite can put them back (a request would also write its own session back, on its idle-timer push).
 */
class RedisDataLossTest {

    private static final int SESSIONS = 40;

    @Test
    void afterRedisRestartsEmptyEveryRouterWritesBackTheLiveSessionsItHolds() throws Exception {
        String routerYaml = """
                pool: {pollInterval: 200ms}
                probe: {interval: 200ms, timeout: 300ms, staleAfter: 3s}
                sessions: {idleTtl: 10m, refreshEvery: 300ms}
                """;
        try (LocalCluster cluster = new LocalCluster(3, Duration.ofSeconds(2), routerYaml)) {
            RouterServer a = cluster.startRouter();
            RouterServer b = cluster.startRouter();
            RouterConfig config = a.config();
            Map<String, String> idByAddress = cluster.replicas().stream()
                    .collect(Collectors.toMap(Replica::grpcAddress, Replica::id));
            List<ExtProcClient> envoys = List.of(cluster.envoyFor(a), cluster.envoyFor(b));
            Map<String, String> bound = new LinkedHashMap<>();
            for (int i = 0; i < SESSIONS; i++) {
                String session = UUID.randomUUID().toString();
                String address = ExtProcClient.upstreamOf(envoys.get(i % 2).sendRetryingUnavailable(
                        ExtProcClient.sparkCall("ExecutePlan", session), Patience.storeCall(config)));
                assertThat(address).as("session %s placed", session).isNotNull();
                bound.put(session, idByAddress.get(address));
            }
            String epochKey = LocalCluster.PREFIX + ":epoch";
            // The routers name the data set on their first poll.
            Await.untilChecked("the epoch marker", Patience.poolChange(config),
                    () -> !cluster.redis().command("GET", epochKey).equals("$-1"));
            String epochBefore = cluster.redis().command("GET", epochKey);
            assertThat(sessionsHeld(cluster, bound)).as("sessions in Redis before it restarts").isEqualTo(SESSIONS);

            cluster.redis().kill();
            cluster.redis().restart();
            // Redis runs without persistence, so it comes back empty; the routers and the replicas' renewals may
            // already have written again by now (DBSIZE is racy), but the data set's marker cannot be the old one.
            assertThat(cluster.redis().command("GET", epochKey)).as("Redis came back without its data")
                    .isNotEqualTo(epochBefore);

            Set<String> missing = new HashSet<>(bound.keySet());
            try {
                Await.untilChecked("every session written back by the routers that hold it",
                        Patience.storeReturn(config).plus(Patience.writeBacks(config, SESSIONS)), () -> {
                            for (var it = missing.iterator(); it.hasNext(); ) {
                                String s = it.next();
                                if (bound.get(s).equals(cluster.storedReplicaId(s))) {
                                    it.remove();
                                }
                            }
                            return missing.isEmpty();
                        });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ": " + missing.size() + " of " + SESSIONS
                        + " not written back", e);
            }
            String epochAfter = cluster.redis().command("GET", epochKey);
            assertThat(epochAfter).as("epoch marker after the restart").isNotEqualTo("$-1").isNotEqualTo(epochBefore);

            // A router that never saw these sessions finds each one where it lives.
            RouterServer fresh = cluster.startRouter();
            ExtProcClient viaFresh = cluster.envoyFor(fresh);
            for (Map.Entry<String, String> e : bound.entrySet()) {
                // A new router's first store calls may miss their deadline on a busy machine: retried like Spark's
                // client retries UNAVAILABLE, for as long as a router takes to use a store that came back.
                var answer = viaFresh.sendRetryingUnavailable(ExtProcClient.sparkCall("AnalyzePlan", e.getKey()),
                        Patience.storeReturn(config));
                assertThat(idByAddress.get(ExtProcClient.upstreamOf(answer)))
                        .as("session %s through a new router: %s", e.getKey(), answer).isEqualTo(e.getValue());
            }
        }
    }

    private static long sessionsHeld(LocalCluster cluster, Map<String, String> bound) throws Exception {
        long n = 0;
        for (Map.Entry<String, String> e : bound.entrySet()) {
            if (e.getValue().equals(cluster.storedReplicaId(e.getKey()))) {
                n++;
            }
        }
        return n;
    }
}
