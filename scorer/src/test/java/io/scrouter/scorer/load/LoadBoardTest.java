package io.scrouter.scorer.load;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.smoothing.Ewma;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class LoadBoardTest {

    private static final double EPS = 1e-12;
    private static final long STALE_AFTER = 3_000;

    // alpha 0.5 per 1 s keeps the hand-computed expectations simple.
    private final LoadBoard board = new LoadBoard(new Ewma(0.5, 1_000), STALE_AFTER);

    /** A sample whose utilisation is exactly {@code demand / 2}. */
    private static LoadSample onTwoSlots(long active, long pending) {
        return new LoadSample(active, pending, 2);
    }

    @Test
    void unknownReplicaIsNeverSampledAndNotFresh() {
        ReplicaLoad load = board.get("nobody");
        assertThat(load.everSampled()).isFalse();
        assertThat(load.utilisation()).isNaN();
        assertThat(load.sampleAgeMillis(10_000)).isEqualTo(Long.MAX_VALUE);
        assertThat(board.isFresh("nobody", 10_000)).isFalse();
    }

    @Test
    void firstSampleIsStoredAsIsAndFresh() {
        ReplicaLoad load = board.recordSample("a", onTwoSlots(2, 14), 10_000);

        assertThat(load.utilisation()).isEqualTo(8.0);
        assertThat(load.lastUtilisation()).isEqualTo(8.0);
        assertThat(load.lastSampleAtMillis()).isEqualTo(10_000);
        assertThat(load.consecutiveFailures()).isZero();
        assertThat(load.lastError()).isNull();
        assertThat(board.get("a")).isEqualTo(load);
        assertThat(board.isFresh("a", 10_000)).isTrue();
    }

    @Test
    void laterSamplesAreSmoothedWithTheEwma() {
        board.recordSample("a", onTwoSlots(2, 14), 10_000); // raw 8
        ReplicaLoad load = board.recordSample("a", onTwoSlots(0, 0), 11_000); // raw 0, one interval later

        // 8 + 0.5 * (0 - 8) = 4
        assertThat(load.utilisation()).isCloseTo(4.0, within(EPS));
        assertThat(load.lastUtilisation()).isZero();
        assertThat(load.lastSampleAtMillis()).isEqualTo(11_000);
    }

    @Test
    void sampleStaysFreshUpToStaleAfterAndNotOneMillisecondLonger() {
        board.recordSample("a", onTwoSlots(1, 0), 10_000);

        assertThat(board.isFresh("a", 10_000 + STALE_AFTER)).isTrue();
        assertThat(board.isFresh("a", 10_000 + STALE_AFTER + 1)).isFalse();
        assertThat(board.get("a").sampleAgeMillis(12_500)).isEqualTo(2_500);
    }

    @Test
    void oneFailureMakesTheReplicaNotFreshEvenWithARecentSample() {
        board.recordSample("a", onTwoSlots(0, 0), 10_000);

        ReplicaLoad load = board.recordFailure("a", "probe timed out");

        // The sample is 0 ms old, yet the replica must not be offered: it failed its last probe.
        assertThat(board.isFresh("a", 10_000)).isFalse();
        assertThat(load.consecutiveFailures()).isEqualTo(1);
        assertThat(load.lastError()).isEqualTo("probe timed out");
        // What was known is kept (for status pages), only its trust is withdrawn.
        assertThat(load.utilisation()).isZero();
        assertThat(load.lastSampleAtMillis()).isEqualTo(10_000);
    }

    @Test
    void failuresAccumulateAndTheNextSuccessClearsThem() {
        board.recordSample("a", onTwoSlots(2, 0), 10_000); // raw 1
        board.recordFailure("a", "first");
        board.recordFailure("a", "second");
        assertThat(board.get("a").consecutiveFailures()).isEqualTo(2);
        assertThat(board.get("a").lastError()).isEqualTo("second");

        ReplicaLoad load = board.recordSample("a", onTwoSlots(0, 0), 13_000); // raw 0, three intervals later

        assertThat(load.consecutiveFailures()).isZero();
        assertThat(load.lastError()).isNull();
        assertThat(board.isFresh("a", 13_000)).isTrue();
        // w = 1 - 0.5^3 = 0.875; 1 + 0.875 * (0 - 1) = 0.125
        assertThat(load.utilisation()).isCloseTo(0.125, within(EPS));
    }

    @Test
    void failureOfANeverSampledReplicaLeavesItUnknown() {
        ReplicaLoad load = board.recordFailure("a", "connection refused");

        assertThat(load.everSampled()).isFalse();
        assertThat(load.utilisation()).isNaN();
        assertThat(load.consecutiveFailures()).isEqualTo(1);
        assertThat(board.isFresh("a", 0)).isFalse();
    }

    @Test
    void lateOlderSampleDoesNotOverwriteANewerOne() {
        board.recordSample("a", onTwoSlots(2, 14), 10_000); // raw 8
        board.recordSample("a", onTwoSlots(0, 0), 11_000); // avg 4

        // An answer to the probe sent at 10.5 s arrives after the 11 s one.
        ReplicaLoad load = board.recordSample("a", onTwoSlots(2, 2), 10_500);

        assertThat(load.utilisation()).isCloseTo(4.0, within(EPS));
        assertThat(load.lastUtilisation()).isZero();
        assertThat(load.lastSampleAtMillis()).isEqualTo(11_000);
        assertThat(board.get("a")).isEqualTo(load);
    }

    @Test
    void sampleAtTheSameInstantReplacesTheRawValueButNotTheAverage() {
        board.recordSample("a", onTwoSlots(1, 0), 10_000); // raw 0.5
        ReplicaLoad load = board.recordSample("a", onTwoSlots(2, 2), 10_000); // raw 2, zero gap

        assertThat(load.utilisation()).isEqualTo(0.5);
        assertThat(load.lastUtilisation()).isEqualTo(2.0);
    }

    @Test
    void placementsAreCountedUntilTheNextSample() {
        board.recordSample("a", onTwoSlots(0, 0), 10_000);
        board.notePlacement("a");
        board.notePlacement("a");
        board.notePlacement("a");
        board.notePlacement("b");

        assertThat(board.get("a").placementsSinceSample()).isEqualTo(3);
        assertThat(board.get("b").placementsSinceSample()).isEqualTo(1);
        // Counting a placement must not change what is known about the load.
        assertThat(board.get("a").utilisation()).isZero();
        assertThat(board.isFresh("a", 10_000)).isTrue();

        board.recordSample("a", onTwoSlots(1, 0), 11_000);

        assertThat(board.get("a").placementsSinceSample()).isZero();
        assertThat(board.get("b").placementsSinceSample()).isEqualTo(1);
    }

    @Test
    void placementsSurviveAFailureSoTheDegradedFallbackStillSeesThem() {
        board.recordSample("a", onTwoSlots(0, 0), 10_000);
        board.notePlacement("a");
        board.notePlacement("a");

        assertThat(board.recordFailure("a", "timeout").placementsSinceSample()).isEqualTo(2);
    }

    @Test
    void retainOnlyForgetsReplicasThatLeftThePool() {
        board.recordSample("a", onTwoSlots(2, 2), 10_000);
        board.recordSample("b", onTwoSlots(1, 0), 10_000);
        board.notePlacement("a");

        board.retainOnly(Set.of("b"));

        assertThat(board.get("a").everSampled()).isFalse();
        assertThat(board.get("a").placementsSinceSample()).isZero();
        assertThat(board.isFresh("a", 10_000)).isFalse();
        assertThat(board.get("b").utilisation()).isEqualTo(0.5);

        // A replica that comes back starts from nothing: its first sample is taken as is, not blended.
        assertThat(board.recordSample("a", onTwoSlots(0, 0), 11_000).utilisation()).isZero();
    }

    @Test
    void nonPositiveStaleAfterIsRejected() {
        Ewma ewma = new Ewma(0.5, 1_000);
        assertThatThrownBy(() -> new LoadBoard(ewma, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("staleAfterMillis must be positive");
        assertThatThrownBy(() -> new LoadBoard(ewma, -5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-5");
    }

    @Test
    void theSustainedAverageMovesOverTheHorizonNotThePollInterval() {
        LoadBoard slow = new LoadBoard(new Ewma(0.5, 1_000), STALE_AFTER, 10_000);
        slow.recordSample("a", onTwoSlots(2, 0), 0); // raw 1
        ReplicaLoad load = slow.recordSample("a", onTwoSlots(0, 0), 10_000); // raw 0, one horizon later

        // The fast EWMA: 10 intervals of weight 0.5 leave 1/1024 of the old value. The sustained average:
        // one horizon leaves 1/e of it.
        assertThat(load.utilisation()).isCloseTo(1.0 / 1024, within(EPS));
        assertThat(load.sustainedUtilisation()).isCloseTo(Math.exp(-1), within(1e-9));
        assertThat(load.slots()).isEqualTo(2);
    }

    @Test
    void unseenPlacementsFadeWithTimeAtTheSameRateHoweverOftenTheReplicaIsProbed() {
        // The fix for the reset of "placed since last probe": four probes 250 ms apart and one probe 1 s
        // later must leave the same count, e^(-1000/15000) of it.
        LoadBoard often = new LoadBoard(new Ewma(0.5, 250), STALE_AFTER, 15_000);
        LoadBoard seldom = new LoadBoard(new Ewma(0.5, 1_000), STALE_AFTER, 15_000);
        for (LoadBoard b : List.of(often, seldom)) {
            b.recordSample("a", onTwoSlots(0, 0), 0);
            for (int i = 0; i < 5; i++) {
                b.notePlacement("a");
            }
        }
        for (long t = 250; t <= 1_000; t += 250) {
            often.recordSample("a", onTwoSlots(0, 0), t);
        }
        seldom.recordSample("a", onTwoSlots(0, 0), 1_000);

        double expected = 5 * Math.exp(-1_000.0 / 15_000);
        assertThat(often.get("a").unseenPlacements()).isCloseTo(expected, within(1e-9));
        assertThat(seldom.get("a").unseenPlacements()).isCloseTo(expected, within(1e-9));
        assertThat(often.get("a").placementsSinceSample()).isZero();
    }

    @Test
    void unseenPlacementsSurviveAFailedProbe() {
        board.recordSample("a", onTwoSlots(0, 0), 10_000);
        board.notePlacement("a");
        assertThat(board.recordFailure("a", "timeout").unseenPlacements()).isEqualTo(1.0);
    }

    @Test
    void aReleasedSessionTakesBackOneUnseenPlacementAndNeverGoesBelowZero() {
        board.recordSample("a", onTwoSlots(0, 0), 10_000);
        board.notePlacement("a");
        board.notePlacement("a");
        board.noteRelease("a");
        assertThat(board.get("a").unseenPlacements()).isEqualTo(1.0);
        board.noteRelease("a");
        board.noteRelease("a");
        assertThat(board.get("a").unseenPlacements()).isZero();
        board.noteRelease("never-seen");
        assertThat(board.get("never-seen").everSampled()).isFalse();
    }

    @Test
    void candidateCarriesEverythingTheBoardKnows() {
        board.recordSample("a", new LoadSample(3, 1, 8), 10_000);
        board.notePlacement("a");
        Candidate c = board.get("a").candidate("a", true, 7);

        assertThat(c).isEqualTo(new Candidate("a", 0.5, true, 7, 1, 0.5, 8, 0.5, 1.0));
    }

    @Test
    void nonPositiveSustainHorizonIsRejected() {
        assertThatThrownBy(() -> new LoadBoard(new Ewma(0.5, 1_000), 1_000, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sustainMillis must be positive, got 0");
    }

    @Test
    void replicaLoadFreshnessNeedsASampleNoFailureAndRecentEnough() {
        ReplicaLoad ok = new ReplicaLoad(0.5, 0.5, 1_000, 0, null, 0, 8, 0.5, 0);
        assertThat(ok.isFresh(1_500, 1_000)).isTrue();
        assertThat(ok.isFresh(2_001, 1_000)).isFalse();
        // A sample stamped slightly in the future (clock skew between threads) counts as age 0.
        assertThat(ok.sampleAgeMillis(900)).isZero();
        assertThat(ok.isFresh(900, 1_000)).isTrue();

        ReplicaLoad failed = new ReplicaLoad(0.5, 0.5, 1_000, 1, "x", 0, 8, 0.5, 0);
        assertThat(failed.isFresh(1_000, 1_000)).isFalse();
    }
}
