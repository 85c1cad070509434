package io.scrouter.scorer.smoothing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class EwmaTest {

    private static final double EPS = 1e-12;

    // alpha 0.3 over a 1 s interval; expected values below are worked out by hand from
    // avg' = avg + w * (x - avg), w = 1 - (1 - alpha)^(gap / interval).
    private final Ewma ewma = new Ewma(0.3, 1_000);

    @Test
    void firstSampleIsTakenAsIs() {
        assertThat(ewma.next(Double.NaN, Long.MIN_VALUE, 0.8, 5_000)).isEqualTo(0.8);
        assertThat(ewma.next(Double.NaN, 0, 8.0, 5_000)).isEqualTo(8.0);
    }

    @Test
    void sampleOneIntervalLaterWeighsAlpha() {
        // 0.2 + 0.3 * (1.0 - 0.2) = 0.44
        assertThat(ewma.next(0.2, 10_000, 1.0, 11_000)).isCloseTo(0.44, within(EPS));
    }

    @Test
    void sampleTwoIntervalsLaterWeighsOneMinusDecaySquared() {
        // w = 1 - 0.7^2 = 0.51; 0.2 + 0.51 * 0.8 = 0.608
        assertThat(ewma.next(0.2, 10_000, 1.0, 12_000)).isCloseTo(0.608, within(EPS));
    }

    @Test
    void halfIntervalGapWeighsLessThanAlpha() {
        // w = 1 - sqrt(0.7) = 0.16333997346...; 0.2 + w * 0.8 = 0.33067197877...
        double result = ewma.next(0.2, 10_000, 1.0, 10_500);
        assertThat(result).isCloseTo(0.330671978773, within(1e-11));
    }

    @Test
    void zeroGapLeavesTheAverageUnchanged() {
        assertThat(ewma.next(0.2, 10_000, 1.0, 10_000)).isEqualTo(0.2);
    }

    @Test
    void sampleFromBeforeThePreviousCountsAsZeroGap() {
        // A clock that steps back must not produce a negative exponent (weight below zero).
        assertThat(ewma.next(0.2, 10_000, 1.0, 9_000)).isEqualTo(0.2);
    }

    @Test
    void alphaOneKeepsOnlyTheLatestSample() {
        Ewma latest = new Ewma(1.0, 1_000);
        assertThat(latest.next(0.2, 0, 3.5, 1_000)).isEqualTo(3.5);
    }

    @Test
    void smoothingFollowsASequenceOfSamples() {
        // alpha 0.5, samples 8, 6, 4 at 1 s steps: 8 -> 7 -> 5.5
        Ewma half = new Ewma(0.5, 1_000);
        double avg = half.next(Double.NaN, Long.MIN_VALUE, 8.0, 1_000);
        avg = half.next(avg, 1_000, 6.0, 2_000);
        assertThat(avg).isCloseTo(7.0, within(EPS));
        avg = half.next(avg, 2_000, 4.0, 3_000);
        assertThat(avg).isCloseTo(5.5, within(EPS));
    }

    @Test
    void alphaOutsideZeroToOneIsRejected() {
        assertThatThrownBy(() -> new Ewma(0.0, 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("alpha must be in (0, 1]");
        assertThatThrownBy(() -> new Ewma(1.01, 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got 1.01");
        assertThatThrownBy(() -> new Ewma(-0.5, 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("alpha");
        assertThatThrownBy(() -> new Ewma(Double.NaN, 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("alpha");
    }

    @Test
    void nonPositiveIntervalIsRejected() {
        assertThatThrownBy(() -> new Ewma(0.3, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("interval must be positive");
        assertThatThrownBy(() -> new Ewma(0.3, -1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1000 ms");
    }

    @Test
    void nonFiniteSampleIsRejected() {
        assertThatThrownBy(() -> ewma.next(0.2, 0, Double.NaN, 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sample must be finite");
        assertThatThrownBy(() -> ewma.next(0.2, 0, Double.POSITIVE_INFINITY, 1_000))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Infinity");
    }
}
