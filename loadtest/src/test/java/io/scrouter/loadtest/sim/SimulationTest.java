package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Workload;
import io.scrouter.scorer.policy.PolicySettings;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SimulationTest {

    private static SimResult run(ScenarioSpec spec, String contender, long seed) {
        Contender c = Contenders.named(List.of(contender), PolicySettings.DEFAULTS, null).get(0);
        return new Simulation(spec, new Workload(spec, seed), c, seed).run(n -> { });
    }

    private static ScenarioSpec small(String... overrides) {
        List<String> o = new ArrayList<>(List.of("duration=20m", "warmup=0s", "snapshotAt=10m",
                "clients.sessionsPerSecond=0", "clients.initialSessions=1", "clients.lifetime.median=15m",
                "clients.lifetime.sigma=0", "clients.tasks=[{tasks: 16, weight: 1}]", "clients.taskTime.sigma=0",
                "clients.taskTime.median=200ms", "clients.think.median=5s", "clients.think.sigma=0",
                "clients.intensity.alpha=0", "cluster.replicas=[8]"));
        o.addAll(List.of(overrides));
        return ScenarioFiles.load("steady", o);
    }

    @Test
    void aSingleUserAloneOnAReplicaHasSlowdownExactlyOne() {
        for (String contender : List.of("seed", "predicted", "random", "greedy-instant", "consistent-hash")) {
            SimResult r = run(small(), contender, 1);
            assertThat(r.completedQueries()).as(contender).isGreaterThan(100);
            assertThat(r.slowdowns()).as(contender).containsOnly(1.0);
            assertThat(r.sessionsAtSnapshot()).containsExactly(1);
            assertThat(r.failedQueries()).isZero();
        }
    }

    @Test
    void aClosedLoopUserWaitsForEachResultAndAnOpenLoopOneDoesNot() {
        // 16 tasks of 200 ms on 8 slots take 400 ms alone; think 5 s. Closed loop: one query per 5.4 s.
        // Open loop: one query per 5 s whatever happens.
        SimResult closed = run(small(), "seed", 1);
        SimResult open = run(small("clients.loop=open"), "seed", 1);
        long lifetime = 15 * 60_000;
        assertThat(closed.sentQueries()).isBetween(lifetime / 5_400 - 2, lifetime / 5_400 + 2);
        assertThat(open.sentQueries()).isBetween(lifetime / 5_000 - 2, lifetime / 5_000 + 2);
    }

    @Test
    void overloadedClosedLoopUsersSendFewerQueriesThanOpenLoopOnes() {
        // Forty users on one replica, each asking for 400 ms of the whole replica every ~1 s: far more than it has.
        String[] heavy = {"clients.initialSessions=40", "clients.think.median=1s"};
        SimResult closed = run(small(heavy), "seed", 2);
        SimResult open = run(small(heavy[0], heavy[1], "clients.loop=open"), "seed", 2);
        assertThat(closed.sentQueries()).isLessThan(open.sentQueries() / 3);
        assertThat(closed.slowdown(0.5)).isLessThan(open.slowdown(0.5));
    }

    @Test
    void slowdownIsAgainstTheLargestReplicaSoSmallReplicasCostTime() {
        // One user pinned (by hash) to whichever replica; on the 4-slot one 16 tasks take 4 waves, not 2.
        SimResult r = run(small("cluster.replicas=[4]"), "seed", 1);
        assertThat(r.slowdowns()).containsOnly(1.0);
        SimResult mixed = run(small("cluster.replicas=[4, 8]", "clients.initialSessions=6"), "fewest-sessions", 1);
        assertThat(mixed.slowdown(0.0)).isEqualTo(1.0);
        assertThat(mixed.slowdowns()).contains(2.0);
    }

    @Test
    void queriesOnAFailedReplicaAreLostAndItsUsersStartNewSessionsElsewhere() {
        ScenarioSpec spec = small("clients.initialSessions=20", "cluster.replicas=[8, 8]",
                "cluster.changes=[{at: 5m, fail: 1}]", "snapshotAt=8m");
        SimResult r = run(spec, "predicted", 1);
        assertThat(r.failedQueries()).isPositive();
        // After the failure every session lives on the one replica left.
        assertThat(r.sessionsAtSnapshot()).containsExactly(20);
    }

    @Test
    void aDrainingReplicaKeepsItsSessionsAndTakesNoNewOnes() {
        ScenarioSpec spec = small("clients.initialSessions=10", "clients.sessionsPerSecond=0.2",
                "cluster.replicas=[8, 8]", "cluster.changes=[{at: 1m, drain: 1}]", "snapshotAt=19m",
                "clients.lifetime.median=30m");
        SimResult r = run(spec, "fewest-sessions", 1);
        int[] s = r.sessionsAtSnapshot();
        // About 10 + 0.2 × 1,080 s ≈ 226 sessions; the drained replica holds only what it had at 1 min.
        assertThat(s[1]).isLessThanOrEqualTo(10 + 12);
        assertThat(s[0]).isGreaterThan(190);
    }

    @Test
    void aJoiningReplicaStartsEmptyAndTakesNewSessions() {
        ScenarioSpec spec = small("clients.initialSessions=20", "clients.sessionsPerSecond=0.1",
                "cluster.replicas=[8, 8]", "cluster.changes=[{at: 5m, join: [8]}]", "snapshotAt=10m",
                "clients.lifetime.median=30m");
        SimResult r = run(spec, "fewest-sessions", 1);
        // 20 + 0.1 × 600 s = 80 sessions; by 10 min the newcomer has caught up with the others' ~27.
        assertThat(r.sessionsAtSnapshot()).hasSize(3);
        assertThat(r.minSessions()).isGreaterThanOrEqualTo(20);
    }

    /**
     * Ten sessions open at once and query every {@code think}; from 6 min newcomers arrive, and the last of them
     * reports the recent count its placement saw, with how many newcomers came before it.
     */
    private static long[] recentSeenByTheLastNewcomer(String think) {
        long[] seen = {-1};
        Contender watcher = new Contender("watcher", "records the recent count", false, ctx -> (session, ready, random) -> {
            seen[0] = ready.get(0).recentSessions();
            return ready.get(0).replicaId();
        });
        ScenarioSpec spec = small("clients.initialSessions=0", "clients.think.median=" + think,
                "clients.bursts=[{at: 0s, sessions: 10, over: 1s}]", "clients.firstQueryAfter=1s",
                "clients.profile=[{from: 0s, sessionsPerSecond: 0}, {from: 6m, sessionsPerSecond: 0.05}]",
                "cluster.recentWindow=2m", "duration=8m", "snapshotAt=7m");
        Workload workload = new Workload(spec, 1);
        long newcomers = workload.arrivals().stream().filter(a -> a.atMillis() >= 6 * 60_000).count();
        new Simulation(spec, workload, watcher, 1).run(n -> { });
        return new long[] {seen[0], newcomers - 1};
    }

    @Test
    void sessionsCountAsRecentWhileTheyQueryAndNotOnceTheyIdleLongerThanTheWindow() {
        // Querying every 5 s (their idle timers pushed every 30 s): the ten are recent, and so is every newcomer,
        // all bound within the last 2 min.
        long[] busy = recentSeenByTheLastNewcomer("5s");
        assertThat(busy[1]).isPositive();
        assertThat(busy[0]).isEqualTo(10 + busy[1]);
        // Thinking 15 min: the ten last pushed when they opened, 6 min before; only the newcomers are recent.
        long[] idle = recentSeenByTheLastNewcomer("15m");
        assertThat(idle[0]).isEqualTo(idle[1]);
    }

    @Test
    void theSameSeedGivesTheSameResultAndRoutersOnlyEverPlaceOnLiveReplicas() {
        ScenarioSpec spec = ScenarioFiles.load("churn", List.of("duration=40m",
                "cluster.changes=[{at: 20m, fail: 2}, {at: 21m, join: [8, 8]}]"));
        SimResult a = run(spec, "predicted", 4);
        SimResult b = run(spec, "predicted", 4);
        assertThat(a.slowdowns()).containsExactly(b.slowdowns());
        assertThat(a.failedQueries()).isEqualTo(b.failedQueries()).isPositive();
        assertThat(a.slowdown(0.0)).isGreaterThanOrEqualTo(1.0);
        // 10 replicas, 2 dead, 2 new: the snapshot (22 min) counts the 10 live ones.
        assertThat(a.sessionsAtSnapshot()).hasSize(10);
    }
}
