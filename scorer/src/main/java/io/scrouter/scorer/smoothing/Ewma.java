package io.scrouter.scorer.smoothing;

/**
 * Exponentially weighted moving average over irregularly spaced samples.
 *
 * <p>{@code alpha} is the weight of a new sample that arrives exactly one nominal interval after the
 * previous one. A sample after a longer gap weighs more ({@code 1 - (1 - alpha)^(gap / interval)}), because
 * the old average describes an older past; two samples at the same instant do not double-count. The
 * average itself is passed in and returned, so callers can keep it in an immutable snapshot, and time is
 * always an argument, so results are deterministic under test.
 *
 * @param alpha          weight of a sample one interval after the previous one, in (0, 1]
 * @param intervalMillis the nominal sampling interval (the probe's poll interval)
 */
public record Ewma(double alpha, long intervalMillis) {

    public Ewma {
        if (!(alpha > 0.0 && alpha <= 1.0)) {
            throw new IllegalArgumentException("EWMA alpha must be in (0, 1], got " + alpha);
        }
        if (intervalMillis <= 0) {
            throw new IllegalArgumentException("EWMA interval must be positive, got " + intervalMillis + " ms");
        }
    }

    /**
     * The average after adding {@code sample} taken at {@code atMillis}.
     *
     * @param previous         the average so far, or NaN when there is none (the sample is then taken as is)
     * @param previousAtMillis when the previous sample was taken
     */
    public double next(double previous, long previousAtMillis, double sample, long atMillis) {
        if (!Double.isFinite(sample)) {
            throw new IllegalArgumentException("sample must be finite, got " + sample);
        }
        if (Double.isNaN(previous)) {
            return sample;
        }
        long gap = Math.max(0L, atMillis - previousAtMillis);
        double weight = 1.0 - Math.pow(1.0 - alpha, (double) gap / intervalMillis);
        return previous + weight * (sample - previous);
    }
}
