package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class PoliciesTest {

    @Test
    void seedNameBuildsTheSeedPolicy() {
        PlacementPolicy policy = Policies.byName("seed", PolicySettings.DEFAULTS);

        assertThat(policy).isInstanceOf(SeedPolicy.class);
        assertThat(policy.name()).isEqualTo("seed");
    }

    @Test
    void settingsReachThePolicy() {
        SeedPolicy policy = (SeedPolicy) Policies.byName("seed", new PolicySettings(0.5, 0.5, 4));

        // 0.5 * 0.4 + 0.5 * (2 / 4) = 0.45; with the defaults (0.9, 0.1, 50) it would be 0.364.
        assertThat(policy.score(new Candidate("a", 0.4, true, 2, 0))).isCloseTo(0.45, within(1e-12));
    }

    @Test
    void defaultsAreTheSeedDesignValues() {
        assertThat(PolicySettings.DEFAULTS).isEqualTo(new PolicySettings(0.9, 0.1, 50));
        // The default is the policy that beat the seed formula in the simulator; the seed stays selectable.
        assertThat(Policies.DEFAULT).isEqualTo(PredictedLoadPolicy.NAME);
        assertThat(Policies.NAMES).contains(SeedPolicy.NAME);
        assertThat(Policies.NAMES).contains(Policies.DEFAULT);
    }

    @Test
    void everyListedNameBuildsAPolicyOfThatName() {
        for (String name : Policies.NAMES) {
            assertThat(Policies.byName(name, PolicySettings.DEFAULTS).name()).isEqualTo(name);
        }
    }

    @Test
    void unknownNameIsRejectedListingTheKnownNames() {
        assertThatThrownBy(() -> Policies.byName("fastest", PolicySettings.DEFAULTS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'fastest'")
                .hasMessageContaining("known policies: [predicted, seed, fewest-sessions, random]");
    }

    @Test
    void nameMatchIsExact() {
        // Configuration typos must surface at start, not silently select something.
        assertThatThrownBy(() -> Policies.byName("Seed", PolicySettings.DEFAULTS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("known policies");
    }

    @Test
    void invalidSettingsAreRejectedByThePolicy() {
        assertThatThrownBy(() -> Policies.byName("seed", new PolicySettings(0.9, 0.1, 0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("session cap must be positive");
    }

    @Test
    void fewestSessionsCountsSessionsPerSlotAndRandomSpreadsEvenly() {
        PlacementPolicy fewest = Policies.byName("fewest-sessions", PolicySettings.DEFAULTS);
        java.util.SplittableRandom random = new java.util.SplittableRandom(2);
        // 12 sessions on 16 slots (0.75 per slot) beat 7 on 8 (0.875), whatever the load.
        Candidate big = new Candidate("big", 3.0, true, 12, 0, 3.0, 16, 3.0, 0);
        Candidate small = new Candidate("small", 0.0, true, 7, 0, 0.0, 8, 0.0, 0);
        assertThat(fewest.choose(java.util.List.of(small, big), random)).isEqualTo(big);

        PlacementPolicy uniform = Policies.byName("random", PolicySettings.DEFAULTS);
        int[] wins = new int[2];
        for (int i = 0; i < 2_000; i++) {
            wins[uniform.choose(java.util.List.of(small, big), random) == big ? 1 : 0]++;
        }
        assertThat(wins[0]).isBetween(900, 1_100);
    }
}
