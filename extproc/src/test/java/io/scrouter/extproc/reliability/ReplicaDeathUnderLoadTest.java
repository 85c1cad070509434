package io.scrouter.extproc.reliability;

import io.grpc.Status;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.ExtProcClient;
import io.scrouter.extproc.testing.LocalCluster;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.TrafficDriver;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Short version of the 20%-kill test (the long one is in loadtest/): one of five replicas dies while two
 * routers take traffic. New sessions stop going to it as soon as a router's probe fails, sessions on the
 * healthy replicas see no errors, and its own sessions keep their route until it leaves the pool, then get
 * the documented "session lost" error. Latency figures are printed, not asserted.
 */
class ReplicaDeathUnderLoadTest {

    @Test
    void killingOneReplicaInFiveUnderLoadAffectsOnlyItsOwnSessions() throws Exception {
        String routerYaml = """
                pool: {pollInterval: 200ms, departureGrace: 500ms}
                probe: {interval: 200ms, timeout: 300ms, staleAfter: 2s}
                sessions: {idleTtl: 10m, refreshEvery: 1s}
                """;
        try (LocalCluster cluster = new LocalCluster(5, Duration.ofSeconds(3), routerYaml)) {
            RouterServer a = cluster.startRouter();
            RouterServer b = cluster.startRouter();
            RouterConfig config = a.config();
            String dead = cluster.replica(4).id();
            String deadAddress = cluster.replica(4).grpcAddress();
            Await.until("all replicas fresh on both routers", Patience.probeRound(config), () -> cluster.replicas().stream().allMatch(r ->
                    a.board().isFresh(r.id(), System.currentTimeMillis())
                            && b.board().isFresh(r.id(), System.currentTimeMillis())));
            Duration trafficBound = Patience.departure(config, cluster.replicaTtl())
                    .plus(Patience.probeRound(config)).multipliedBy(2);
            try (TrafficDriver traffic = new TrafficDriver(List.of(cluster.envoyFor(a), cluster.envoyFor(b)),
                    60, 4, 4, trafficBound, 200_000, false, Patience.decision(config))) {
                traffic.awaitCompleted("steady traffic", 800);
                long killedAt = System.nanoTime();
                cluster.kill(4);
                Await.until("both routers saw a failed probe", Patience.probeRound(config),
                        () -> a.board().get(dead).consecutiveFailures() > 0 && b.board().get(dead).consecutiveFailures() > 0);
                long detectedAt = System.nanoTime();
                Await.until("the dead replica left both pools (instance-store expiry)",
                        Patience.departure(config, cluster.replicaTtl()),
                        () -> a.pool().snapshot().get(dead) == null && b.pool().snapshot().get(dead) == null);
                long leftAt = System.nanoTime();
                traffic.awaitCompleted("traffic after the replica left", traffic.completed() + 500);
                traffic.close();

                List<TrafficDriver.Result> all = traffic.results();
                assertThat(all).noneMatch(r -> r.grpcStatus() == -2);

                // Which replica each session was first routed to, by either router.
                Map<String, String> home = new HashMap<>();
                for (TrafficDriver.Result r : all.stream().sorted((x, y) -> Long.compare(x.atNanos(), y.atNanos())).toList()) {
                    if (r.upstream() != null) {
                        home.putIfAbsent(r.session(), r.upstream());
                    }
                }
                for (TrafficDriver.Result r : all) {
                    String own = home.get(r.session());
                    if (own != null && !own.equals(deadAddress)) {
                        // Errors do not spread: sessions on healthy replicas are always routed, to their replica.
                        assertThat(r.upstream()).as("session %s on a healthy replica", r.session()).isEqualTo(own);
                    }
                }
                // No new session is placed on the dead replica once both routers' probes have failed.
                assertThat(traffic.between(detectedAt, Long.MAX_VALUE)).filteredOn(TrafficDriver.Result::newSession)
                        .extracting(TrafficDriver.Result::upstream).doesNotContain(deadAddress).isNotEmpty();
                // Its own sessions: routed to it while it is in the pool, then told their state is gone.
                List<TrafficDriver.Result> orphans = traffic.between(leftAt, Long.MAX_VALUE).stream()
                        .filter(r -> deadAddress.equals(home.get(r.session()))).toList();
                assertThat(orphans).allSatisfy(r -> {
                    assertThat(r.upstream()).isNull();
                    assertThat(r.grpcStatus()).isEqualTo(Status.Code.FAILED_PRECONDITION.value());
                });

                List<TrafficDriver.Result> steady = traffic.between(0, killedAt);
                List<TrafficDriver.Result> fault = traffic.between(killedAt, leftAt);
                System.out.printf("replica death: detection %.0f ms after kill; decision p50/p95/p99 steady %.2f/%.2f/%.2f ms,"
                                + " during fault %.2f/%.2f/%.2f ms; %d requests, %d orphaned-session requests after expiry%n",
                        (detectedAt - killedAt) / 1e6,
                        TrafficDriver.percentileMillis(steady, 0.5), TrafficDriver.percentileMillis(steady, 0.95),
                        TrafficDriver.percentileMillis(steady, 0.99), TrafficDriver.percentileMillis(fault, 0.5),
                        TrafficDriver.percentileMillis(fault, 0.95), TrafficDriver.percentileMillis(fault, 0.99),
                        all.size(), orphans.size());
            }
        }
    }
}
