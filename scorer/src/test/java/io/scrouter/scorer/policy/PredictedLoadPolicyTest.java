package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.smoothing.Ewma;
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

    /** A fresh candidate of {@code slots} slots whose fast and sustained utilisation are both {@code util}. */
    private static Candidate replica(String id, double util, long sessions, double unseen, long slots) {
        return new Candidate(id, util, true, sessions, 0, util, slots, util, unseen);
    }

    @Test
    void perSessionLoadIsSustainedLoadInSlotsOverSessions() {
        // (0.5 * 8 + 0.25 * 8) / (4 + 2) = 1 slot per session
        assertThat(policy.perSession(List.of(replica("a", 0.5, 4, 0, 8), replica("b", 0.25, 2, 0, 8))))
                .isCloseTo(1.0, within(EPS));
    }

    @Test
    void perSessionLoadNeverFallsBelowThePriorOfSlotsOverCap() {
        // Prior: mean slots 8 / cap 10 = 0.8 slots per session.
        assertThat(policy.perSession(List.of(replica("a", 0.0, 0, 0, 8), replica("b", 0.0, 0, 0, 8))))
                .isCloseTo(0.8, within(EPS));
        // Measured 0.1 * 8 / 4 = 0.2 per session, below the prior: the prior wins.
        assertThat(policy.perSession(List.of(replica("a", 0.1, 4, 0, 8)))).isCloseTo(0.8, within(EPS));
        // Never sampled (NaN) counts as no load.
        assertThat(policy.perSession(List.of(replica("a", Double.NaN, 3, 0, 8)))).isCloseTo(0.8, within(EPS));
    }

    @Test
    void predictionIsHalfCappedLoadPlusUnseenPlacementsAndHalfTheCountShare() {
        // perSession 2 slots; 8 slots. measured = 0.5 + 2 * 2 / 8 = 1.0; byCount = (3 + 1) * 2 / 8 = 1.0.
        assertThat(policy.predicted(replica("a", 0.5, 3, 2, 8), 2.0)).isCloseTo(1.0, within(EPS));
        // A queue of 10 times the slots counts as 4 (full): measured = 4; byCount = (0 + 1) * 2 / 8.
        assertThat(policy.predicted(replica("b", 10.0, 0, 0, 8), 2.0)).isCloseTo(0.5 * 4 + 0.5 * 0.25, within(EPS));
    }

    @Test
    void aBurstBetweenTwoProbesSpreadsInsteadOfHerdingOnTheIdlestReplica() {
        // The seed formula's weakness: utilisation is frozen between probes, so it sent the whole burst to
        // "idle". Here each placement raises the chosen replica's prediction at once.
        Map<String, long[]> placed = new HashMap<>(); // id -> {sessions, placed in this burst}
        placed.put("idle", new long[] {4, 0});
        placed.put("half", new long[] {4, 0});
        placed.put("busy", new long[] {4, 0});
        Map<String, Double> util = Map.of("idle", 0.1, "half", 0.5, "busy", 0.9);
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 30; i++) {
            List<Candidate> candidates = new ArrayList<>();
            for (String id : List.of("idle", "half", "busy")) {
                long[] s = placed.get(id);
                candidates.add(replica(id, util.get(id), s[0] + s[1], s[1], 8));
            }
            placed.get(policy.choose(candidates, random).replicaId())[1]++;
        }
        // perSession = (0.1 + 0.5 + 0.9) * 8 / 12 = 1 slot while the burst is placed (the prior 0.8 is lower).
        // Each placement adds 1/8 to both terms, so 1/8 per session against load gaps of 0.4 * 0.5 = 0.2:
        // the idle replica takes a lead of 1.6 sessions over "half" and 3.2 over "busy", then all rise together.
        long idle = placed.get("idle")[1];
        long half = placed.get("half")[1];
        long busy = placed.get("busy")[1];
        assertThat(idle + half + busy).isEqualTo(30);
        assertThat(idle - half).isBetween(1L, 2L);
        assertThat(half - busy).isBetween(1L, 2L);
    }

    @Test
    void aNewSampleDoesNotForgetSessionsPlacedJustBeforeIt() {
        // Regression: the old rule counted placements only until the next sample, but a session placed just
        // before a probe has not sent its first query, so the sample showed nothing of it and the next burst
        // went to the same replica again (worse the faster the probes).
        LoadBoard board = new LoadBoard(new Ewma(0.5, 250), 5_000, 15_000);
        for (String id : List.of("a", "b")) {
            board.recordSample(id, new LoadSample(2, 0, 8), 0);
        }
        for (int i = 0; i < 6; i++) {
            board.notePlacement("a");
        }
        board.recordSample("a", new LoadSample(2, 0, 8), 250); // the same load: the new sessions are silent yet
        board.recordSample("b", new LoadSample(2, 0, 8), 250);
        Candidate a = board.get("a").candidate("a", true, 10);
        Candidate b = board.get("b").candidate("b", true, 10);

        assertThat(a.unseenPlacements()).isCloseTo(6 * Math.exp(-250.0 / 15_000), within(1e-9));
        assertThat(a.placementsSinceSample()).isZero();
        // Same sample and same shared count (both 10), but a still carries its six silent sessions.
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 100; i++) {
            assertThat(policy.choose(List.of(a, b), random)).isEqualTo(b);
        }
    }

    @Test
    void aReplicaTwiceTheSizeTakesTwiceTheSessions() {
        long[] sessions = {0, 0};
        SplittableRandom random = new SplittableRandom(5);
        for (int i = 0; i < 300; i++) {
            List<Candidate> cs = List.of(replica("small", 0.3, sessions[0], 0, 8), replica("big", 0.3, sessions[1], 0, 16));
            sessions["small".equals(policy.choose(cs, random).replicaId()) ? 0 : 1]++;
        }
        assertThat((double) sessions[1] / sessions[0]).isCloseTo(2.0, within(0.05));
    }

    @Test
    void sessionsOtherRoutersJustPlacedCountAgainstAReplicaBeforeItsNextSample() {
        // Same sample; "b" holds 5 more sessions in the shared store (another router's burst).
        Candidate a = replica("a", 0.3, 10, 0, 8);
        Candidate b = replica("b", 0.3, 15, 0, 8);
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < 100; i++) {
            assertThat(policy.choose(List.of(a, b), random)).isEqualTo(a);
        }
    }

    @Test
    void equalPredictionsAreBrokenAtRandomNotByListOrder() {
        List<Candidate> same = List.of(replica("x", 0.4, 2, 0, 8), replica("y", 0.4, 2, 0, 8), replica("z", 0.4, 2, 0, 8));
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
    void rejectsANonPositiveCapAWeightOutsideZeroToOneAndNoCandidates() {
        assertThatThrownBy(() -> new PredictedLoadPolicy(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("session cap must be positive, got 0");
        assertThatThrownBy(() -> new PredictedLoadPolicy(10, 1.5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("measured weight must be in [0, 1], got 1.5");
        assertThatThrownBy(() -> policy.choose(List.of(), new SplittableRandom(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no candidates");
    }

    @Test
    void scoresShownToOperatorsAreTheOnesThePolicyRanksBy() {
        // perSession = (1.0 * 8 + 0.2 * 8) / (3 + 1) = 2.4 slots;
        // a: 0.5 * 1.0 + 0.5 * (4 * 2.4 / 8) = 1.1; b: 0.5 * (0.2 + 2 * 2.4 / 8) + 0.5 * (2 * 2.4 / 8) = 0.7
        List<Candidate> cs = List.of(replica("a", 1.0, 3, 0, 8), replica("b", 0.2, 1, 2, 8));
        double[] scores = policy.scores(cs);
        assertThat(scores[0]).isCloseTo(1.1, within(EPS));
        assertThat(scores[1]).isCloseTo(0.7, within(EPS));
        assertThat(policy.choose(cs, new SplittableRandom(1)).replicaId()).isEqualTo("b");
    }
}
