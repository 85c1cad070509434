package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.trace.Scenario;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.scorer.policy.PolicySettings;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SimulationTest {

    private static final String S = "3f1c2a9e-5b7d-4c1e-8f00-0123456789ab";

    private static Scenario oneReplica(int routers) {
        return new Scenario("tiny", "test", 60_000, new Scenario.Traffic(0, false, 0, null),
                new Scenario.Cluster(1, 8, routers, 1_000, 50, List.of()), 30_000);
    }

    private static SimResult run(Scenario scenario, List<TraceEvent> trace, String contender) {
        Contender c = Contenders.named(List.of(contender), PolicySettings.DEFAULTS).get(0);
        return new Simulation(scenario, trace, c, 1).run(n -> { });
    }

    @Test
    void aSingleSessionAloneOnASingleReplicaHasSlowdownExactlyOne() {
        List<TraceEvent> trace = new ArrayList<>();
        trace.add(new TraceEvent.SessionStart(0, S, 0));
        for (int i = 0; i < 10; i++) {
            // Queries far enough apart never overlap: 20 tasks on 8 slots take 3 waves of 200 ms.
            trace.add(new TraceEvent.Query(1_000 + i * 5_000L, S, 20, 200, List.of("ExecutePlan")));
        }
        trace.add(new TraceEvent.SessionEnd(59_000, S));
        for (String contender : List.of("seed", "predicted", "random", "oracle")) {
            SimResult r = run(oneReplica(1), trace, contender);
            assertThat(r.completedQueries()).as(contender).isEqualTo(10);
            assertThat(r.slowdowns()).as(contender).containsOnly(1.0);
            assertThat(r.sessionsAtSnapshot()).containsExactly(1);
        }
    }

    @Test
    void twoQueriesAtOnceShareTheSlotsFirstComeFirstServed() {
        String other = "3f1c2a9e-5b7d-4c1e-8f00-0123456789ac";
        List<TraceEvent> trace = List.of(
                new TraceEvent.SessionStart(0, S, 0),
                new TraceEvent.SessionStart(0, other, 0),
                new TraceEvent.Query(100, S, 8, 1_000, List.of("ExecutePlan")),
                new TraceEvent.Query(100, other, 8, 1_000, List.of("ExecutePlan")),
                new TraceEvent.SessionEnd(50_000, S),
                new TraceEvent.SessionEnd(50_000, other));
        SimResult r = run(oneReplica(1), trace, "seed");
        // The first query runs alone (slowdown 1); the second waits one full wave behind it (2).
        assertThat(r.slowdowns()).containsExactly(1.0, 2.0);
    }

    @Test
    void everyRouterPlacesOnlyOnLiveReplicasAndEveryQueryCompletes() {
        Scenario s = new Scenario("small", "test", 120_000, new Scenario.Traffic(0.5, false, 0, null),
                new Scenario.Cluster(3, 4, 2, 1_000, 50, List.of()), 60_000);
        List<TraceEvent> trace = new io.scrouter.loadtest.trace.TraceGenerator(s, 5).generate();
        long queries = trace.stream().filter(e -> e instanceof TraceEvent.Query).count();
        SimResult r = run(s, trace, "predicted");
        assertThat(r.completedQueries()).isEqualTo(queries);
        assertThat(r.failedQueries()).isZero();
        assertThat(r.slowdown(0.0)).isGreaterThanOrEqualTo(1.0);
    }
}
