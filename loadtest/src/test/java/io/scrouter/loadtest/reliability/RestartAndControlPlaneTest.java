package io.scrouter.loadtest.reliability;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.loadtest.reliability.LocalCluster;
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

    /**
     * Routes a request as Spark's client sends it: a store blip's UNAVAILABLE is retried; the final answer must
     * be a route (null is never an acceptable first route to compare later ones with).
     */
    private static String route(ExtProcClient envoy, RouterServer router, String session) throws Exception {
        var answer = envoy.sendRetryingUnavailable(ExtProcClient.sparkCall("ExecutePlan", session),
                Patience.storeCall(router.config()));
        String upstream = ExtProcClient.upstreamOf(answer);
        assertThat(upstream).as("route of session %s: %s", session, answer).isNotNull();
        return upstream;
    }

    @Test
    void restartedRouterLosesNoPlacementAndServesAtOnce() throws Exception {
        try (LocalCluster cluster = new LocalCluster(3, Duration.ofMinutes(1), ROUTER)) {
            RouterServer first = cluster.startRouter();
            ExtProcClient envoy = cluster.envoyFor(first);
            Map<String, String> placed = new HashMap<>();
            for (int i = 0; i < 30; i++) {
                String s = UUID.randomUUID().toString();
                placed.put(s, route(envoy, first, s));
            }
            cluster.stopRouter(first);

            RouterServer restarted = cluster.startRouter();
            // The first pool read happens before the server accepts requests: no waiting for a poll.
            assertThat(restarted.pool().snapshot().size()).isEqualTo(3);
            ExtProcClient again = cluster.envoyFor(restarted);
            for (Map.Entry<String, String> e : placed.entrySet()) {
                assertThat(route(again, restarted, e.getKey())).as("session %s", e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void withThePublisherGoneRoutingContinuesOnTheLastPoolUntilEntriesExpire() throws Exception {
        try (LocalCluster cluster = new LocalCluster(2, Duration.ofSeconds(3), ROUTER)) {
            RouterServer router = cluster.startRouter();
            ExtProcClient envoy = cluster.envoyFor(router);
            String pinned = UUID.randomUUID().toString();
            String home = route(envoy, router, pinned);

            // Redis itself briefly unreadable: the pool is kept as it was.
            cluster.redis().pause();
            try {
                // The poll's read gives up at its own deadline, a few Redis deadlines.
                router.poolRefresher().refresh().get(Patience.poolChange(router.config()).toMillis(),
                        TimeUnit.MILLISECONDS);
                assertThat(router.poolRefresher().lastError()).isNotNull();
                assertThat(router.pool().snapshot().size()).isEqualTo(2);
            } finally {
                cluster.redis().resume();
            }

            cluster.stopPublishing();
            // Until the entries expire (no earlier than one TTL after their last renewal) and the departure grace
            // has passed, nothing changes for clients. Only answers received before then are checked, and there
            // must be some, or the check would be empty.
            long earliestDeparture = cluster.lastRenewalNanos() + cluster.replicaTtl().toNanos()
                    + router.config().pool().departureGrace().toNanos();
            int answeredInTime = 0;
            for (int i = 0; i < 10; i++) {
                var pinnedAnswer = envoy.sendRetryingUnavailable(ExtProcClient.sparkCall("ExecutePlan", pinned),
                        Patience.storeCall(router.config()));
                var newAnswer = envoy.sendRetryingUnavailable(ExtProcClient.sparkCall("ExecutePlan",
                        UUID.randomUUID().toString()), Patience.storeCall(router.config()));
                int poolSize = router.pool().snapshot().size();
                if (System.nanoTime() - earliestDeparture >= 0) {
                    break;
                }
                assertThat(ExtProcClient.upstreamOf(pinnedAnswer)).as("%s", pinnedAnswer).isEqualTo(home);
                assertThat(ExtProcClient.upstreamOf(newAnswer)).as("%s", newAnswer).isNotNull();
                assertThat(poolSize).isEqualTo(2);
                answeredInTime++;
            }
            assertThat(answeredInTime).as("requests answered before the entries could expire").isPositive();
            // Replicas leave only by expiry (plus the departure grace).
            Await.until("entries expired", Patience.departure(router.config(), cluster.replicaTtl()),
                    () -> router.pool().snapshot().size() == 0);
        }
    }

    @Test
    void drainingAndWarmingTakeEffectWithinOnePollAndExistingSessionsKeepWorking() throws Exception {
        try (LocalCluster cluster = new LocalCluster(3, Duration.ofMinutes(1), ROUTER)) {
            RouterServer router = cluster.startRouter();
            ExtProcClient envoy = cluster.envoyFor(router);
            Await.until("fresh samples", Patience.probeRound(router.config()), () -> cluster.replicas().stream()
                    .allMatch(r -> router.board().isFresh(r.id(), System.currentTimeMillis())));
            Map<String, List<String>> byReplica = new HashMap<>();
            for (int i = 0; i < 30; i++) {
                String s = UUID.randomUUID().toString();
                byReplica.computeIfAbsent(route(envoy, router, s), k -> new ArrayList<>()).add(s);
            }
            String drainingAddress = cluster.replica(0).grpcAddress();
            String warmingAddress = cluster.replica(1).grpcAddress();
            assertThat(byReplica).containsKeys(drainingAddress, warmingAddress);

            cluster.announce(0, ReplicaState.DRAINING);
            cluster.announce(1, ReplicaState.WARMING);
            // exactly one poll
            router.poolRefresher().refresh().get(Patience.poolChange(router.config()).toMillis(), TimeUnit.MILLISECONDS);

            for (int i = 0; i < 30; i++) {
                assertThat(route(envoy, router, UUID.randomUUID().toString()))
                        .isEqualTo(cluster.replica(2).grpcAddress());
            }
            for (String s : byReplica.get(drainingAddress)) {
                assertThat(route(envoy, router, s)).isEqualTo(drainingAddress);
            }
            for (String s : byReplica.get(warmingAddress)) {
                assertThat(route(envoy, router, s)).isEqualTo(warmingAddress);
            }
        }
    }
}
