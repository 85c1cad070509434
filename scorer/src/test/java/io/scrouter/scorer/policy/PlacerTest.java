package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.Placement;
import io.scrouter.scorer.PlacementPolicy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

import static org.assertj.core.api.Assertions.assertThat;

class PlacerTest {

    private final Placer placer = new Placer(SeedPolicy.withDefaults(50));

    /** Records what the pipeline offers to the policy, then delegates to the seed policy. */
    private static final class RecordingPolicy implements PlacementPolicy {
        final List<List<Candidate>> offered = new ArrayList<>();
        private final SeedPolicy delegate = SeedPolicy.withDefaults(50);

        @Override
        public String name() {
            return "recording";
        }

        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            offered.add(List.copyOf(candidates));
            return delegate.choose(candidates, random);
        }
    }

    private static Candidate fresh(String id, double utilisation, long sessions) {
        return new Candidate(id, utilisation, true, sessions, 0);
    }

    private static Candidate stale(String id, double utilisation, long sessions, long placed) {
        return new Candidate(id, utilisation, false, sessions, placed);
    }

    @Test
    void noReadyReplicaGivesNoPlacement() {
        assertThat(placer.place(List.of(), new SplittableRandom(1))).isEqualTo(Optional.empty());
    }

    @Test
    void staleReplicaThatLooksIdleNeverWinsOverAFreshBusyOne() {
        // The stale one's last known utilisation is 0 and it has no sessions: by score it would win.
        // An unreachable replica must never look idle, so it is not even offered.
        Candidate unreachable = stale("unreachable", 0.0, 0, 0);
        Candidate busy = fresh("busy", 0.95, 40);
        SplittableRandom random = new SplittableRandom(17);

        for (int i = 0; i < 1_000; i++) {
            List<Candidate> ready = i % 2 == 0 ? List.of(unreachable, busy) : List.of(busy, unreachable);
            assertThat(placer.place(ready, random)).contains(new Placement("busy", false));
        }
    }

    @Test
    void onlyFreshCandidatesAreOfferedToThePolicy() {
        RecordingPolicy policy = new RecordingPolicy();
        Placer recording = new Placer(policy);
        Candidate a = fresh("a", 0.7, 1);
        Candidate b = stale("b", 0.0, 0, 0);
        Candidate c = fresh("c", 0.4, 2);
        Candidate d = stale("d", Double.NaN, 0, 0); // never sampled

        Optional<Placement> placement = recording.place(List.of(a, b, c, d), new SplittableRandom(2));

        assertThat(policy.offered).containsExactly(List.of(a, c));
        // 0.9*0.4 + 0.1*2/50 = 0.364 beats 0.9*0.7 + 0.1*1/50 = 0.632
        assertThat(placement).contains(new Placement("c", false));
        assertThat(recording.policy()).isSameAs(policy);
    }

    @Test
    void withoutAnyFreshSampleThePlacementIsDegradedAndByFewestSessions() {
        RecordingPolicy policy = new RecordingPolicy();
        Placer recording = new Placer(policy);
        // Counts are active sessions + placements since the last sample: 5, 3, 5.
        List<Candidate> ready = List.of(
                stale("a", 0.0, 5, 0),
                stale("b", 9.0, 2, 1),
                stale("c", Double.NaN, 1, 4));

        Optional<Placement> placement = recording.place(ready, new SplittableRandom(3));

        // Utilisations are not trusted here: "a" looks idle but has more sessions than "b".
        assertThat(placement).contains(new Placement("b", true));
        assertThat(policy.offered).as("the policy only ever sees fresh candidates").isEmpty();
    }

    @Test
    void placementsSinceSampleCountInTheDegradedChoice() {
        // Same bound sessions, but this router already sent two new sessions to "x".
        List<Candidate> ready = List.of(stale("x", 0.0, 4, 2), stale("y", 0.0, 4, 0));
        assertThat(placer.place(ready, new SplittableRandom(4))).contains(new Placement("y", true));
    }

    @Test
    void degradedChoiceIsRandomAmongEquals() {
        // "a" and "b" both count 3; "c" counts 4 and must never be chosen.
        List<Candidate> ready = List.of(stale("a", 0.0, 2, 1), stale("b", 0.0, 3, 0), stale("c", 0.0, 4, 0));
        SplittableRandom random = new SplittableRandom(2_024);
        int trials = 10_000;
        Map<String, Integer> wins = new HashMap<>();
        for (int i = 0; i < trials; i++) {
            Placement p = placer.place(ready, random).orElseThrow();
            assertThat(p.degraded()).isTrue();
            wins.merge(p.replicaId(), 1, Integer::sum);
        }

        assertThat(wins).containsOnlyKeys("a", "b");
        assertThat(wins.get("a")).as("wins %s", wins).isBetween(4_000, 6_000);
    }

    @Test
    void oneFreshReplicaIsEnoughToLeaveDegradedMode() {
        List<Candidate> ready = List.of(stale("s1", 0.0, 0, 0), stale("s2", 0.0, 0, 0), fresh("f", 3.0, 49));
        assertThat(placer.place(ready, new SplittableRandom(5))).contains(new Placement("f", false));
    }

    @Test
    void freshTiesAreBrokenAtRandomThroughThePolicy() {
        List<Candidate> ready = List.of(fresh("a", 0.5, 10), stale("s", 0.0, 0, 0), fresh("b", 0.5, 10));
        SplittableRandom random = new SplittableRandom(6);
        Map<String, Integer> wins = new HashMap<>();
        for (int i = 0; i < 10_000; i++) {
            wins.merge(placer.place(ready, random).orElseThrow().replicaId(), 1, Integer::sum);
        }
        assertThat(wins).containsOnlyKeys("a", "b");
        assertThat(wins.get("a")).as("wins %s", wins).isBetween(4_000, 6_000);
    }
}
