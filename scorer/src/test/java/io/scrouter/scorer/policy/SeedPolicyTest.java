package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class SeedPolicyTest {

    private static final double EPS = 1e-12;

    private final SeedPolicy policy = SeedPolicy.withDefaults(10);

    private static Candidate fresh(String id, double utilisation, long sessions) {
        return new Candidate(id, utilisation, true, sessions, 0);
    }

    @Test
    void nameIsSeed() {
        assertThat(policy.name()).isEqualTo("seed");
    }

    @Test
    void scoreIsNineTenthsUtilisationPlusOneTenthSessionShare() {
        // 0.9 * 0.5 + 0.1 * (3 / 10) = 0.45 + 0.03
        assertThat(policy.score(fresh("a", 0.5, 3))).isCloseTo(0.48, within(EPS));
        // 0.9 * 0.2 + 0.1 * (7 / 10) = 0.18 + 0.07
        assertThat(policy.score(fresh("b", 0.2, 7))).isCloseTo(0.25, within(EPS));
        // 0.9 * 8.0 + 0 (queued work: utilisation above 1 is not capped)
        assertThat(policy.score(fresh("c", 8.0, 0))).isCloseTo(7.2, within(EPS));
        assertThat(policy.score(fresh("d", 0.0, 0))).isZero();
    }

    @Test
    void sessionTermSaturatesAtTheCap() {
        // At the cap and far above it the session term is 1: 0.9 * 0.1 + 0.1 * 1 = 0.19 for both.
        assertThat(policy.score(fresh("at-cap", 0.1, 10))).isCloseTo(0.19, within(EPS));
        assertThat(policy.score(fresh("far-above", 0.1, 1_000))).isCloseTo(0.19, within(EPS));
        // Saturation means those two tie: either may win.
        Random random = new Random(7);
        Map<String, Integer> wins = new HashMap<>();
        List<Candidate> both = List.of(fresh("at-cap", 0.1, 10), fresh("far-above", 0.1, 1_000));
        for (int i = 0; i < 1_000; i++) {
            wins.merge(policy.choose(both, random).replicaId(), 1, Integer::sum);
        }
        assertThat(wins).containsOnlyKeys("at-cap", "far-above");
    }

    @Test
    void lowestScoreWinsWhereverItIsInTheList() {
        Candidate a = fresh("a", 0.5, 3);  // 0.48
        Candidate b = fresh("b", 0.2, 7);  // 0.25
        Candidate c = fresh("c", 0.3, 0);  // 0.27
        Random random = new Random(1);

        assertThat(policy.choose(List.of(a, b, c), random)).isEqualTo(b);
        assertThat(policy.choose(List.of(b, a, c), random)).isEqualTo(b);
        assertThat(policy.choose(List.of(c, a, b), random)).isEqualTo(b);
        assertThat(policy.choose(List.of(b), random)).isEqualTo(b);
    }

    @Test
    void sessionTermDecidesBetweenEqualUtilisations() {
        Candidate crowded = fresh("crowded", 0.4, 9);
        Candidate quiet = fresh("quiet", 0.4, 2);
        assertThat(policy.choose(List.of(crowded, quiet), new Random(3))).isEqualTo(quiet);
    }

    @Test
    void tiesAreBrokenUniformlyAtRandomNotByListOrder() {
        // Three identical scores (0.9 * 0.3 + 0.1 * 0.5). Expected share 1/3 each.
        List<Candidate> tied = List.of(fresh("x", 0.3, 5), fresh("y", 0.3, 5), fresh("z", 0.3, 5));
        Random random = new Random(20_240_601L);
        int trials = 10_000;
        Map<String, Integer> wins = new HashMap<>();
        for (int i = 0; i < trials; i++) {
            wins.merge(policy.choose(tied, random).replicaId(), 1, Integer::sum);
        }

        assertThat(wins).containsOnlyKeys("x", "y", "z");
        for (String id : List.of("x", "y", "z")) {
            assertThat(wins.get(id)).as("wins of %s in %s", id, wins).isBetween(2_500, 4_200);
        }
    }

    @Test
    void scoresWithinFloatNoiseAreTied() {
        // 0.3 and 0.1 + 0.2 differ only in the last bit; float noise must not decide placement.
        List<Candidate> nearlyEqual = List.of(fresh("p", 0.3, 0), fresh("q", 0.1 + 0.2, 0));
        assertThat(0.1 + 0.2).isNotEqualTo(0.3);
        Random random = new Random(11);
        Map<String, Integer> wins = new HashMap<>();
        for (int i = 0; i < 1_000; i++) {
            wins.merge(policy.choose(nearlyEqual, random).replicaId(), 1, Integer::sum);
        }
        assertThat(wins).containsOnlyKeys("p", "q");
    }

    @Test
    void realDifferenceIsNotTreatedAsATie() {
        // 1e-6 in utilisation is far above the tie tolerance: the lower one always wins.
        List<Candidate> close = List.of(fresh("higher", 0.300001, 0), fresh("lower", 0.3, 0));
        Random random = new Random(5);
        for (int i = 0; i < 1_000; i++) {
            assertThat(policy.choose(close, random).replicaId()).isEqualTo("lower");
        }
    }

    @Test
    void sameSeedGivesTheSameSequenceOfChoices() {
        List<Candidate> tied = List.of(fresh("x", 0.3, 5), fresh("y", 0.3, 5), fresh("z", 0.3, 5));
        Random first = new Random(99);
        Random second = new Random(99);
        for (int i = 0; i < 100; i++) {
            assertThat(policy.choose(tied, first)).isEqualTo(policy.choose(tied, second));
        }
    }

    @Test
    void emptyCandidateListIsRejected() {
        assertThatThrownBy(() -> policy.choose(List.of(), new Random(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no candidates");
    }

    @Test
    void customWeightsAreApplied() {
        SeedPolicy sessionsOnly = new SeedPolicy(0.0, 1.0, 4);
        // 0 * 0.9 + 1 * (2 / 4)
        assertThat(sessionsOnly.score(fresh("a", 0.9, 2))).isCloseTo(0.5, within(EPS));
        SeedPolicy loadOnly = new SeedPolicy(1.0, 0.0, 4);
        assertThat(loadOnly.score(fresh("a", 0.9, 2))).isCloseTo(0.9, within(EPS));
    }

    @Test
    void negativeOrAllZeroWeightsAreRejected() {
        assertThatThrownBy(() -> new SeedPolicy(-0.1, 0.1, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("weights must be finite, non-negative")
                .hasMessageContaining("utilisation=-0.1");
        assertThatThrownBy(() -> new SeedPolicy(0.9, -1.0, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessions=-1.0");
        assertThatThrownBy(() -> new SeedPolicy(0.0, 0.0, 10))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not both zero");
    }

    @Test
    void nonPositiveSessionCapIsRejected() {
        assertThatThrownBy(() -> new SeedPolicy(0.9, 0.1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("session cap must be positive, got 0");
        assertThatThrownBy(() -> SeedPolicy.withDefaults(-3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got -3");
    }

    // Regression: NaN passed the old checks (NaN < 0 and NaN + x == 0 are both false) and turned the
    // policy into "always the first candidate".
    @Test
    void nonFiniteWeightsAreRejected() {
        assertThatThrownBy(() -> new SeedPolicy(Double.NaN, 0.1, 10))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new SeedPolicy(0.9, Double.POSITIVE_INFINITY, 10))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
