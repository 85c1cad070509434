package io.scrouter.extproc.reliability;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.ExtProcClient;
import io.scrouter.extproc.testing.LocalCluster;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Router restarts, a control plane that stops publishing, and replicas announced warming or draining: the
 * placement state lives in Redis, the last pool keeps serving, and state changes take effect within one poll.
 */
class RestartAndControlPlaneTest {

    private static final String ROUTER = """
            pool: {pollInterval: 200ms, departureGrace: 500ms}
            probe: {interval: 200ms, staleAfter: 3s}
            sessions: {idleTtl: 10m, refreshEvery: 1s}
            """;

    private static String route(ExtProcClient envoy, String session) throws Exception {
        return ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", session)));
    }

    @Test
    void restartedRouterLosesNoPlacementAndServesAtOnce() throws Exception {
        try (LocalCluster cluster = new LocalCluster(3, Duration.ofMinutes(1), ROUTER)) {
            RouterServer first = cluster.startRouter();
            ExtProcClient envoy = cluster.envoyFor(first);
            Map<String, String> placed = new HashMap<>();
            for (int i = 0; i < 30; i++) {
                String s = UUID.randomUUID().toString();
                placed.put(s, route(envoy, s));
            }
            cluster.stopRouter(first);

            RouterServer restarted = cluster.startRouter();
            // The first pool read happens before the server accepts requests: no waiting for a poll.
            assertThat(restarted.pool().snapshot().size()).isEqualTo(3);
            ExtProcClient again = cluster.envoyFor(restarted);
            for (Map.Entry<String, String> e : placed.entrySet()) {
                assertThat(route(again, e.getKey())).as("session %s", e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void withThePublisherGoneRoutingContinuesOnTheLastPoolUntilEntriesExpire() throws Exception {
        try (LocalCluster cluster = new LocalCluster(2, Duration.ofSeconds(3), ROUTER)) {
            RouterServer router = cluster.startRouter();
            ExtProcClient envoy = cluster.envoyFor(router);
            String pinned = UUID.randomUUID().toString();
            String home = route(envoy, pinned);

            // Redis itself briefly unreadable: the pool is kept as it was.
            cluster.redis().pause();
            try {
                router.poolRefresher().refresh().get(5, TimeUnit.SECONDS);
                assertThat(router.poolRefresher().lastError()).isNotNull();
                assertThat(router.pool().snapshot().size()).isEqualTo(2);
            } finally {
                cluster.redis().resume();
            }

            cluster.stopPublishing();
            long stoppedAt = System.nanoTime();
            // Until the entries expire, nothing changes for clients.
            for (int i = 0; i < 10 && System.nanoTime() - stoppedAt < TimeUnit.MILLISECONDS.toNanos(1500); i++) {
                assertThat(route(envoy, pinned)).isEqualTo(home);
                assertThat(route(envoy, UUID.randomUUID().toString())).isNotNull();
            }
            assertThat(router.pool().snapshot().size()).isEqualTo(2);
            // Replicas leave only by expiry (plus the departure grace).
            Await.until("entries expired", () -> router.pool().snapshot().size() == 0);
        }
    }

    @Test
    void drainingAndWarmingTakeEffectWithinOnePollAndExistingSessionsKeepWorking() throws Exception {
        try (LocalCluster cluster = new LocalCluster(3, Duration.ofMinutes(1), ROUTER)) {
            RouterServer router = cluster.startRouter();
            ExtProcClient envoy = cluster.envoyFor(router);
            Await.until("fresh samples", () -> cluster.replicas().stream()
                    .allMatch(r -> router.board().isFresh(r.id(), System.currentTimeMillis())));
            Map<String, List<String>> byReplica = new HashMap<>();
            for (int i = 0; i < 30; i++) {
                String s = UUID.randomUUID().toString();
                byReplica.computeIfAbsent(route(envoy, s), k -> new ArrayList<>()).add(s);
            }
            String drainingAddress = cluster.replica(0).grpcAddress();
            String warmingAddress = cluster.replica(1).grpcAddress();
            assertThat(byReplica).containsKeys(drainingAddress, warmingAddress);

            cluster.announce(0, ReplicaState.DRAINING);
            cluster.announce(1, ReplicaState.WARMING);
            router.poolRefresher().refresh().get(5, TimeUnit.SECONDS);   // exactly one poll

            for (int i = 0; i < 30; i++) {
                assertThat(route(envoy, UUID.randomUUID().toString()))
                        .isEqualTo(cluster.replica(2).grpcAddress());
            }
            for (String s : byReplica.get(drainingAddress)) {
                assertThat(route(envoy, s)).isEqualTo(drainingAddress);
            }
            for (String s : byReplica.get(warmingAddress)) {
                assertThat(route(envoy, s)).isEqualTo(warmingAddress);
            }
        }
    }
}
