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

    private final PredictedLoadPolicy policy = new PredictedLoadPolicy();

    /** A fresh candidate of {@code slots} slots whose fast and sustained utilisation are both {@code util}. */
    private static Candidate replica(String id, double util, long sessions, double unseen, long slots) {
        return new Candidate(id, util, true, sessions, 0, util, slots, util, unseen);
    }

    @Test
    void perSessionLoadIsSustainedLoadInSlotsOverSessions() {
        // (1.5 * 8 + 1.0 * 8) / (4 + 2) = 3.33 slots per session, above the floor of 16 slots / 6 sessions.
        assertThat(policy.perSession(List.of(replica("a", 1.5, 4, 0, 8), replica("b", 1.0, 2, 0, 8))))
                .isCloseTo(20.0 / 6, within(EPS));
    }

    @Test
    void perSessionLoadNeverFallsBelowTheSlotsSharedAmongTheSessions() {
        // A crowd that has not sent queries yet: 0.1 * 16 / 8 = 0.2 measured, floor 16 slots / 8 sessions = 2.
        assertThat(policy.perSession(List.of(replica("a", 0.1, 4, 0, 8), replica("b", 0.1, 4, 0, 8))))
                .isCloseTo(2.0, within(EPS));
        // An empty pool: all its slots for the first session. Never sampled (NaN) counts as no load.
        assertThat(policy.perSession(List.of(replica("a", 0.0, 0, 0, 8), replica("b", Double.NaN, 0, 0, 4))))
                .isCloseTo(12.0, within(EPS));
    }

    @Test
    void aCrowdOnAnIdlePoolSpreadsEvenIfOneReplicaLookedBusyAtTheLastProbe() {
        // Regression: with a prior of slots / cap (0.16 slots a session) the count term weighed nothing, and 30
        // sessions opened at once on three idle replicas went 6 / 12 / 12 because one of them was running the
        // first query of an earlier session when it was probed.
        long[] placed = new long[3];
        double[] util = {0.75, 0.0, 0.0};
        SplittableRandom random = new SplittableRandom(9);
        for (int i = 0; i < 30; i++) {
            List<Candidate> cs = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                cs.add(replica("r" + r, util[r], placed[r], placed[r], 4));
            }
            placed[Integer.parseInt(policy.choose(cs, random).replicaId().substring(1))]++;
        }
        // The busy one is avoided for a few sessions, not for the whole crowd.
        assertThat(placed[0]).isBetween(7L, 10L);
        assertThat(placed[1] + placed[2]).isEqualTo(30 - placed[0]);
    }

    /** A fresh candidate whose store says {@code recent} of its {@code sessions} sent a request lately. */
    private static Candidate replica(String id, double util, long sessions, long recent, double unseen, long slots) {
        return new Candidate(id, util, true, sessions, 0, util, slots, util, unseen, recent);
    }

    @Test
    void predictionWeighsCappedLoadPlusUnseenPlacementsAgainstTheShareOfRecentSessions() {
        // perSession 2 slots; 8 slots. measured = 0.5 + 2 * 2 / 8 = 1.0; byCount = (3 recent + 1) * 2 / 8 = 1.0;
        // 0.4 * 1.0 + 0.6 * 1.0. The 9 idle sessions bound besides the 3 recent ones do not count.
        assertThat(policy.predicted(replica("a", 0.5, 12, 3, 2, 8), 2.0)).isCloseTo(1.0, within(EPS));
        // A queue of 40 times the slots counts as 32 (full): measured = 32; byCount = (0 + 1) * 2 / 8.
        assertThat(policy.predicted(replica("b", 40.0, 0, 0, 0, 8), 2.0)).isCloseTo(0.4 * 32 + 0.6 * 0.25, within(EPS));
        // Below the cap the queue counts in full: 10 * 0.4 + (1 * 2 / 8) * 0.6.
        assertThat(policy.predicted(replica("c", 10.0, 0, 0, 0, 8), 2.0)).isCloseTo(4.0 + 0.15, within(EPS));
    }

    @Test
    void aReplicaFullOfIdleNotebooksIsNotBusierThanOneWhoseFewSessionsWork() {
        // Same load; "notebooks" has 20 sessions bound but 2 in use, "workers" 5 bound, all 5 in use.
        Candidate notebooks = replica("notebooks", 0.5, 20, 2, 0, 8);
        Candidate workers = replica("workers", 0.5, 5, 5, 0, 8);
        SplittableRandom random = new SplittableRandom(4);
        for (int i = 0; i < 100; i++) {
            assertThat(policy.choose(List.of(notebooks, workers), random)).isEqualTo(notebooks);
        }
    }

    /**
     * The situation {@code DataPathWithRealSparkTest.newSessionsGoToTheIdleReplicaWithTheDefaultPolicyOnEitherRouter}
     * met on real Spark: replica A (2 slots) runs a 16-task query, utilisation 8; replica B (2 slots) is idle but
     * still holds 20 sessions from earlier work, idle for longer than the recent window. Eight new sessions open
     * one after another and stay open. Counting every bound session, the old rule sent new sessions to A from the
     * first one: 0.5 * min(8, 4) + 0.5 * 1 * 0.76 / 2 = 2.2 against B's 0.5 * 21 * 0.76 / 2 = 4.0.
     */
    @Test
    void newSessionsGoToTheIdleReplicaEvenIfItHoldsManyIdleSessions() {
        for (long busySessions : new long[] {0, 1}) { // the busy session placed by the router, or connected directly
            long[] bound = {busySessions, 20};
            long[] recent = {busySessions, 0};
            double[] unseen = {0, 0};
            double[] util = {8.0, 0.0};
            SplittableRandom random = new SplittableRandom(11);
            List<String> landed = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                List<Candidate> cs = List.of(replica("A", util[0], bound[0], recent[0], unseen[0], 2),
                        replica("B", util[1], bound[1], recent[1], unseen[1], 2));
                String id = policy.choose(cs, random).replicaId();
                landed.add(id);
                int r = id.equals("A") ? 0 : 1;
                bound[r]++;
                recent[r]++;
                unseen[r]++;
            }
            assertThat(landed).as("busy replica's own sessions: %d", busySessions).containsOnly("B");
        }
        // The first decision by hand, A's session placed by the router: perSession = 8 * 2 / 21 = 0.762 slots;
        // A: 0.4 * 8 + 0.6 * (1 + 1) * 0.762 / 2 = 3.657; B: 0.4 * 0 + 0.6 * (0 + 1) * 0.762 / 2 = 0.229.
        List<Candidate> first = List.of(replica("A", 8.0, 1, 1, 0, 2), replica("B", 0.0, 20, 0, 0, 2));
        double[] scores = policy.scores(first);
        assertThat(scores[0]).isCloseTo(0.4 * 8 + 0.6 * 2 * (16.0 / 21) / 2, within(EPS));
        assertThat(scores[1]).isCloseTo(0.6 * (16.0 / 21) / 2, within(EPS));
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
        // perSession is the floor, 24 slots over the sessions: 2 slots at the first placement, 24/42 at the last.
        // Each placement adds perSession / 8 to both terms (weights 0.4 and 0.6), so the load gaps of
        // 0.4 × 0.4 = 0.16 are worth under one session at first and about three at the end: the idle replica
        // leads by a few, no more.
        long idle = placed.get("idle")[1];
        long half = placed.get("half")[1];
        long busy = placed.get("busy")[1];
        assertThat(idle + half + busy).isEqualTo(30);
        assertThat(idle).isGreaterThanOrEqualTo(half);
        assertThat(half).isGreaterThanOrEqualTo(busy);
        assertThat(idle - busy).isBetween(2L, 6L);
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
    void theRuleBeforeTheRecentCountStaysAvailableForComparison() {
        // Counting every bound session, the replica full of idle notebooks loses: byCount (20 + 1) against (5 + 1).
        PredictedLoadPolicy bound = new PredictedLoadPolicy(0.5, 4, false);
        Candidate notebooks = replica("notebooks", 0.5, 20, 2, 0, 8);
        Candidate workers = replica("workers", 0.5, 5, 5, 0, 8);
        assertThat(bound.choose(List.of(notebooks, workers), new SplittableRandom(2))).isEqualTo(workers);
    }

    @Test
    void placementsWhoseSessionsEndedAddNoLoadSoAnIdleReplicaBeatsOneRunningAHeavyJob() {
        // As on real Spark: "busy" runs one heavy job (16 tasks on 2 slots); "idle" took five short sessions that
        // were released since (through another router, so this one still counts them as unseen). perSession is
        // 8 * 2 / 1 = 16 slots. busy: 0.4 * 8 + 0.6 * (2 * 16 / 2) = 12.8; idle: 0.4 * (0 + min(5, 0) * 16 / 2)
        // + 0.6 * (1 * 16 / 2) = 4.8. Counting the five unseen would have made it 0.4 * 40 + 4.8 = 20.8.
        Candidate busy = replica("busy", 8.0, 1, 1, 0, 2);
        Candidate idle = replica("idle", 0.0, 0, 0, 5, 2);
        double[] scores = policy.scores(List.of(busy, idle));
        assertThat(scores[0]).isCloseTo(12.8, within(EPS));
        assertThat(scores[1]).isCloseTo(4.8, within(EPS));
        assertThat(policy.choose(List.of(busy, idle), new SplittableRandom(3))).isEqualTo(idle);
    }

    @Test
    void rejectsAWeightOutsideZeroToOneAndNoCandidates() {
        assertThatThrownBy(() -> new PredictedLoadPolicy(1.5, 4, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("measured weight must be in [0, 1], got 1.5");
        assertThatThrownBy(() -> policy.choose(List.of(), new SplittableRandom(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no candidates");
    }

    @Test
    void scoresShownToOperatorsAreTheOnesThePolicyRanksBy() {
        // perSession: measured (1.0 * 8 + 0.2 * 8) / 4 = 2.4, below the floor 16 / 4 = 4 slots;
        // a: 0.4 * 1.0 + 0.6 * (4 * 4 / 8) = 1.6;
        // b: 0.4 * (0.2 + min(2 unseen, 1 in use) * 4 / 8) + 0.6 * (2 * 4 / 8) = 0.88
        List<Candidate> cs = List.of(replica("a", 1.0, 3, 0, 8), replica("b", 0.2, 1, 2, 8));
        double[] scores = policy.scores(cs);
        assertThat(scores[0]).isCloseTo(1.6, within(EPS));
        assertThat(scores[1]).isCloseTo(0.88, within(EPS));
        assertThat(policy.choose(cs, new SplittableRandom(1)).replicaId()).isEqualTo("b");
    }
}
