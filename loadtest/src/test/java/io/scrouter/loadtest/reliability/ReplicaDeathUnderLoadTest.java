package io.scrouter.loadtest.reliability;

import io.grpc.Status;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.loadtest.reliability.LocalCluster;
import io.scrouter.loadtest.traffic.TrafficDriver;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Short version of the 20%-kill test (the long one is in loadtest/): one of five replicas dies while two
 * routers take traffic. New sessions stop going to it as soon as a router's probe fails, sessions on the
 * healthy replicas see no errors, and its own sessions keep their route until it leaves the pool, then get
 * the documented "session lost" error. The p95 of decisions while it dies stays inside the decision deadline.
 */
class ReplicaDeathUnderLoadTest {

    private static final int LONG_LIVED = 60;
    private static final int THREADS = 4;

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
            Await.until("all replicas fresh on both routers", Patience.probeRound(config), () ->
                    cluster.replicas().stream().allMatch(r -> a.board().isFresh(r.id(), System.currentTimeMillis())
                            && b.board().isFresh(r.id(), System.currentTimeMillis())));
            Duration trafficBound = Patience.departure(config, cluster.replicaTtl())
                    .plus(Patience.probeRound(config)).multipliedBy(2);
            try (TrafficDriver traffic = new TrafficDriver(List.of(cluster.envoyFor(a), cluster.envoyFor(b)),
                    LONG_LIVED, THREADS, 4, trafficBound, 200_000, false, Patience.decision(config))) {
                traffic.awaitCompleted("steady traffic", 800);
                long killedAt = System.nanoTime();
                cluster.kill(4);
                // The dead endpoint refuses connections: each router's next probe fails.
                Await.until("both routers saw a failed probe", Patience.probeRound(config),
                        () -> a.board().get(dead).consecutiveFailures() > 0 && b.board().get(dead).consecutiveFailures() > 0);
                long detectedAt = System.nanoTime();
                // Renewals stopped at the kill: the entry expires within one TTL of it.
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
                for (TrafficDriver.Result r : all.stream().sorted(Comparator.comparingLong(TrafficDriver.Result::atNanos))
                        .toList()) {
                    if (r.upstream() != null) {
                        home.putIfAbsent(r.session(), r.upstream());
                    }
                }
                // Every long-lived session was placed, and the dead replica held some of them: otherwise the
                // checks below would have nothing to check.
                assertThat(traffic.sessions()).as("long-lived sessions that were routed").allMatch(home::containsKey);
                Set<String> onDead = traffic.sessions().stream().filter(s -> deadAddress.equals(home.get(s)))
                        .collect(Collectors.toSet());
                assertThat(onDead).as("long-lived sessions on the replica that dies").isNotEmpty();

                // No session ever changes replica, whichever router answers.
                assertThat(TrafficDriver.movedSessions(all)).as("sessions routed to two replicas").isEmpty();
                // Errors do not spread: the only answer that is not a route is "session lost", and only for a
                // session of the dead replica, after it died. (A run where everything is rejected fails here.)
                assertThat(all).filteredOn(r -> r.upstream() == null).allSatisfy(r -> {
                    assertThat(home.get(r.session())).as("home of rejected session %s", r.session())
                            .isEqualTo(deadAddress);
                    assertThat(r.grpcStatus()).isEqualTo(Status.Code.FAILED_PRECONDITION.value());
                    assertThat(r.atNanos()).isGreaterThan(killedAt);
                });
                // No new session is placed on the dead replica once both routers' probes have failed, and each
                // of them is placed somewhere.
                assertThat(traffic.between(detectedAt, Long.MAX_VALUE)).filteredOn(TrafficDriver.Result::newSession)
                        .isNotEmpty()
                        .allSatisfy(r -> assertThat(r.upstream()).isNotNull().isNotEqualTo(deadAddress));
                // Its own sessions, once it has left both pools, are told their state is gone, every time.
                List<TrafficDriver.Result> orphans = traffic.between(leftAt, Long.MAX_VALUE).stream()
                        .filter(r -> onDead.contains(r.session())).toList();
                assertThat(orphans).as("requests of the dead replica's sessions after it left").isNotEmpty()
                        .allSatisfy(r -> {
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
                // The seed's criterion is a p95 spike under 100 ms on production hardware; a wall-clock figure
                // like that is measured by loadtest/, not asserted here. What holds on any machine: while the
                // replica dies, 95% of decisions are answered inside the deadline the router promises Envoy
                // (server.decisionDeadline), so no decision waits on the dead replica's probe or departure.
                assertThat(fault).as("requests while the replica died").isNotEmpty();
                assertThat(TrafficDriver.percentileMillis(fault, 0.95))
                        .as("decision p95 while the replica dies, against server.decisionDeadline")
                        .isLessThanOrEqualTo((double) config.server().decisionDeadline().toMillis());
            }
        }
    }
}
