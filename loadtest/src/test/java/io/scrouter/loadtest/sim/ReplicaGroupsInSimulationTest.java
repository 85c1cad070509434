package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Workload;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulated routers apply replica groups: where each team's sessions may go, the fallback order, the caps, and
 * what isolation does to each team's slowdown. Where a session went is watched from the placement rule itself and
 * checked against the scenario's replica groups, not read from the simulation's own tally alone.
 */
class ReplicaGroupsInSimulationTest {

    private static final long SEED = 1;

    /** One placement as the rule made it: the session, the replicas it was offered, the one it chose. */
    private record Placed(String session, List<Candidate> offered, String replica) {
    }

    /** A run of the default policy whose every placement is recorded, in order. */
    private record Watched(SimResult result, List<Placed> placements) {
    }

    private static Watched run(ScenarioSpec spec) {
        List<Placed> placements = new ArrayList<>();
        Contender c = new Contender("watched-default", "the default policy, watched", false, ctx -> {
            PlacementRule real = Contenders.viaPlacer(Policies.byName(Policies.DEFAULT, PolicySettings.DEFAULTS));
            return (session, ready, random) -> {
                String chosen = real.place(session, ready, random);
                placements.add(new Placed(session, List.copyOf(ready), chosen));
                return chosen;
            };
        });
        SimResult r = new Simulation(spec, new Workload(spec, SEED), c, SEED).run(n -> { });
        return new Watched(r, placements);
    }

    /** Session id → team, from the workload (the simulation runs the same one). */
    private static Map<String, String> teams(ScenarioSpec spec) {
        Workload w = new Workload(spec, SEED);
        Map<String, String> out = new HashMap<>();
        w.arrivals().forEach(a -> out.put(w.session(a.index()).id(), w.session(a.index()).team()));
        return out;
    }

    /** The group the scenario gives replica {@code rN}. */
    private static String groupOf(ScenarioSpec spec, String replica) {
        return spec.cluster().groupOf(Integer.parseInt(replica.substring(1)));
    }

    /** The replica groups each team's sessions were placed in, in placement order. */
    private static Map<String, List<String>> groupsPlaced(ScenarioSpec spec, Watched run) {
        Map<String, String> teamOf = teams(spec);
        Map<String, List<String>> out = new HashMap<>();
        for (Placed p : run.placements()) {
            if (p.replica() != null) {
                out.computeIfAbsent(teamOf.get(p.session()), t -> new ArrayList<>()).add(groupOf(spec, p.replica()));
            }
        }
        return out;
    }

    @Test
    void withGroupsNoSessionIsEverPlacedOnAReplicaOfTheOtherTeam() {
        ScenarioSpec spec = ScenarioFiles.load("two-teams");
        Watched with = run(spec);
        Map<String, List<String>> placed = groupsPlaced(spec, with);

        assertThat(placed.get("team-a")).hasSizeGreaterThanOrEqualTo(4 + 16).containsOnly("team-a");
        assertThat(placed.get("team-b")).hasSize(12).containsOnly("team-b");
        // The simulation's own tally, which the comparison table prints, says the same.
        assertThat(with.result().teams().get("team-a").placedOn()).containsOnlyKeys("team-a");
        assertThat(with.result().teams().get("team-b").placedOn()).containsOnlyKeys("team-b");

        // Without groups the same sessions do cross over, so the check above is not empty.
        Map<String, List<String>> free = groupsPlaced(spec, run(spec.withoutGroups()));
        assertThat(free.get("team-a")).contains("team-a", "team-b");
        assertThat(free.get("team-b")).contains("team-a", "team-b");
    }

    @Test
    void theSteadyTeamsP95SlowdownIsLowerWithGroupsAndTheBurstingTeamPaysForIt() throws Exception {
        ScenarioSpec spec = ScenarioFiles.load("two-teams");
        Contender policy = Contenders.named(List.of(Policies.DEFAULT), PolicySettings.DEFAULTS, null).get(0);
        GroupRuns.Outcome o = GroupRuns.run(spec, policy, List.of(SEED), 1);
        SimResult.Team steadyWith = o.withGroups().get("team-b").get(0);
        SimResult.Team steadyWithout = o.withoutGroups().get("team-b").get(0);
        SimResult.Team burstingWith = o.withGroups().get("team-a").get(0);
        SimResult.Team burstingWithout = o.withoutGroups().get("team-a").get(0);

        assertThat(steadyWith.slowdowns()).hasSizeGreaterThan(1_000);
        assertThat(steadyWithout.slowdowns()).hasSizeGreaterThan(1_000);
        assertThat(steadyWith.slowdown(0.95)).isLessThan(steadyWithout.slowdown(0.95));
        // The cost: the bursting team can no longer spread onto the steady team's replicas.
        assertThat(burstingWith.slowdown(0.95)).isGreaterThan(burstingWithout.slowdown(0.95));
    }

    @Test
    void aTeamReachesTheSharedGroupOnlyOnceItsOwnReplicaHoldsItsCap() {
        ScenarioSpec spec = ScenarioFiles.load("two-teams-shared");
        Map<String, Long> caps = spec.cluster().groups().orElseThrow().maxSessionsPerReplica();
        Watched run = run(spec);
        Map<String, List<String>> placed = groupsPlaced(spec, run);

        for (String team : List.of("team-a", "team-b")) {
            List<String> groups = placed.get(team);
            assertThat(groups).as(team).containsOnly(team, "shared").contains("shared");
            // Fallback order: the team's own replica first, the shared ones only when it holds its cap.
            assertThat(groups.indexOf("shared")).as(team).isGreaterThanOrEqualTo(caps.get(team).intValue());
        }
        // A capped replica is offered only below its cap (the policy sees the router's own session counts).
        for (Placed p : run.placements()) {
            for (Candidate c : p.offered()) {
                Long cap = caps.get(groupOf(spec, c.replicaId()));
                if (cap != null) {
                    assertThat(c.activeSessions()).as(c.replicaId()).isLessThan(cap);
                }
            }
        }
    }

    @Test
    void whenEveryAllowedReplicaIsAtItsCapANewSessionIsRefusedAndGoesNowhereElse() {
        // team-b's 12 dashboards, both of its replicas capped at 4: four of them find no room all run long.
        ScenarioSpec spec = ScenarioFiles.load("two-teams", List.of("cluster.groups.maxSessionsPerReplica={team-b: 4}"));
        Watched run = run(spec);
        SimResult.Team b = run.result().teams().get("team-b");

        assertThat(groupsPlaced(spec, run).get("team-b")).hasSizeGreaterThanOrEqualTo(8).containsOnly("team-b");
        assertThat(b.refused()).isGreaterThanOrEqualTo(4);
        assertThat(b.failedQueries()).isPositive();
        assertThat(run.result().teams().get("team-a").refused()).isZero();
        assertThat(run.result().teams().get("team-a").failedQueries()).isZero();
    }

    @Test
    void groupsThatAllowEveryReplicaToEveryTeamPlaceExactlyAsNoGroups() {
        // The group walk offers the same replicas in the same order: not one placement or random draw differs.
        ScenarioSpec spec = ScenarioFiles.load("two-teams", List.of("cluster.replicaGroups=[pool, pool, pool, pool]",
                "cluster.groups.allow={team-a: [pool], team-b: [pool]}"));
        Watched with = run(spec);
        Watched without = run(spec.withoutGroups());

        assertThat(with.placements()).isEqualTo(without.placements());
        assertThat(with.result().slowdowns()).containsExactly(without.result().slowdowns());
        assertThat(with.result().teams().get("team-b").slowdowns())
                .containsExactly(without.result().teams().get("team-b").slowdowns());
    }
}
