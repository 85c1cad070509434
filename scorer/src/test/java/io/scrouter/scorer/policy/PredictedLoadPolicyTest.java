package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class PredictedLoadPolicyTest {

    private static final double EPS = 1e-12;

    private final PredictedLoadPolicy policy = new PredictedLoadPolicy(10);

    private static Candidate fresh(String id, double utilisation, long sessions, long placedSinceSample) {
        return new Candidate(id, utilisation, true, sessions, placedSinceSample);
    }

    @Test
    void perSessionLoadIsTotalUtilisationOverTotalSessions() {
        // (0.6 + 0.2) / (3 + 1) = 0.2
        assertThat(policy.perSession(List.of(fresh("a", 0.6, 3, 0), fresh("b", 0.2, 1, 0))))
                .isCloseTo(0.2, within(EPS));
    }

    @Test
    void perSessionLoadFallsBackToOneOverCapWhenNothingIsBoundOrBusy() {
        assertThat(policy.perSession(List.of(fresh("a", 0.0, 0, 0), fresh("b", 0.0, 0, 0))))
                .isCloseTo(0.1, within(EPS));
        assertThat(policy.perSession(List.of(fresh("a", 0.0, 4, 0)))).isCloseTo(0.1, within(EPS));
    }

    @Test
    void predictionBlendsMeasuredLoadPlusUnseenPlacementsWithTheCountEstimate() {
        // measured = 0.5 + 2 * 0.2 = 0.9; byCount = 3 * 0.2 = 0.6; predicted = (0.9 + 0.6) / 2
        assertThat(policy.predicted(fresh("a", 0.5, 3, 2), 0.2)).isCloseTo(0.75, within(EPS));
        // No sessions, nothing placed: half the measured load.
        assertThat(policy.predicted(fresh("b", 0.8, 0, 0), 0.2)).isCloseTo(0.4, within(EPS));
    }

    @Test
    void aBurstBetweenTwoProbesSpreadsInsteadOfHerdingOnTheIdlestReplica() {
        // Regression for the seed formula's weakness: utilisation is frozen between probes, so it sent the
        // whole burst to "idle". Here every placement raises the chosen replica's prediction at once.
        Map<String, long[]> state = new HashMap<>(); // id -> {sessions, placedSinceSample}
        state.put("idle", new long[] {2, 0});
        state.put("half", new long[] {4, 0});
        state.put("busy", new long[] {6, 0});
        Map<String, Double> util = Map.of("idle", 0.1, "half", 0.5, "busy", 0.9);
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 30; i++) {
            List<Candidate> candidates = new ArrayList<>();
            for (String id : List.of("idle", "half", "busy")) {
                long[] s = state.get(id);
                candidates.add(fresh(id, util.get(id), s[0], s[1]));
            }
            long[] chosen = state.get(policy.choose(candidates, random).replicaId());
            chosen[0]++;
            chosen[1]++;
        }
        // Exact outcome for this seed (two ties along the way): the idle replica takes most, every replica some.
        assertThat(List.of(state.get("idle")[1], state.get("half")[1], state.get("busy")[1]))
                .containsExactly(16L, 10L, 4L);
    }

    @Test
    void sessionsOtherRoutersJustPlacedCountAgainstAReplicaBeforeItsNextSample() {
        // Same measured load; "b" holds 5 more sessions in the shared store (another router's burst).
        Candidate a = fresh("a", 0.3, 10, 0);
        Candidate b = fresh("b", 0.3, 15, 0);
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < 100; i++) {
            assertThat(policy.choose(List.of(a, b), random)).isEqualTo(a);
        }
    }

    @Test
    void equalPredictionsAreBrokenAtRandomNotByListOrder() {
        List<Candidate> same = List.of(fresh("x", 0.4, 2, 0), fresh("y", 0.4, 2, 0), fresh("z", 0.4, 2, 0));
        SplittableRandom random = new SplittableRandom(7);
        Map<String, Integer> wins = new HashMap<>();
        for (int i = 0; i < 3_000; i++) {
            wins.merge(policy.choose(same, random).replicaId(), 1, Integer::sum);
        }
        assertThat(wins).containsOnlyKeys("x", "y", "z");
        wins.values().forEach(n -> assertThat(n).isBetween(900, 1_100));
    }

    @Test
    void isRegisteredAsTheDefaultAndSeedStaysSelectable() {
        assertThat(Policies.DEFAULT).isEqualTo(PredictedLoadPolicy.NAME);
        assertThat(Policies.byName("predicted", PolicySettings.DEFAULTS)).isInstanceOf(PredictedLoadPolicy.class);
        assertThat(Policies.byName("seed", PolicySettings.DEFAULTS)).isInstanceOf(SeedPolicy.class);
    }

    @Test
    void rejectsANonPositiveCap() {
        assertThatThrownBy(() -> new PredictedLoadPolicy(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("session cap must be positive, got 0");
    }

    @org.junit.jupiter.api.Test
    void scoresShownToOperatorsAreTheOnesThePolicyRanksBy() {
        // perSession = (1.0 + 0.2) / (3 + 1) = 0.3; a: 0.5*(1.0 + 0) + 0.5*(3*0.3) = 0.95;
        // b: 0.5*(0.2 + 2*0.3) + 0.5*(1*0.3) = 0.55
        java.util.List<io.scrouter.scorer.Candidate> cs = java.util.List.of(
                new io.scrouter.scorer.Candidate("a", 1.0, true, 3, 0),
                new io.scrouter.scorer.Candidate("b", 0.2, true, 1, 2));
        double[] scores = policy.scores(cs);
        org.assertj.core.api.Assertions.assertThat(scores[0]).isCloseTo(0.95, org.assertj.core.data.Offset.offset(EPS));
        org.assertj.core.api.Assertions.assertThat(scores[1]).isCloseTo(0.55, org.assertj.core.data.Offset.offset(EPS));
        org.assertj.core.api.Assertions.assertThat(policy.choose(cs, new java.util.Random(1)).replicaId()).isEqualTo("b");
    }
}
