package io.scrouter.scorer.load;

/**
 * What the router knows about one replica's load at one moment. Immutable: the board replaces it whole.
 *
 * @param utilisation          EWMA of sampled utilisation; NaN before the first successful sample
 * @param lastUtilisation      the raw utilisation of the last successful sample; NaN before it
 * @param lastSampleAtMillis   when the last successful sample was taken; {@link Long#MIN_VALUE} if never
 * @param consecutiveFailures  probe failures since the last success
 * @param lastError            the last probe failure's message, or null
 * @param placementsSinceSample new sessions placed here since the last successful sample
 */
public record ReplicaLoad(double utilisation, double lastUtilisation, long lastSampleAtMillis,
                          int consecutiveFailures, String lastError, long placementsSinceSample) {

    static final ReplicaLoad UNKNOWN = new ReplicaLoad(Double.NaN, Double.NaN, Long.MIN_VALUE, 0, null, 0);

    public boolean everSampled() {
        return lastSampleAtMillis != Long.MIN_VALUE;
    }

    /** Milliseconds since the last successful sample, or {@link Long#MAX_VALUE} if there was none. */
    public long sampleAgeMillis(long nowMillis) {
        return everSampled() ? Math.max(0L, nowMillis - lastSampleAtMillis) : Long.MAX_VALUE;
    }

    /**
     * Fresh means the utilisation can be trusted for placement: sampled within {@code staleAfterMillis} and
     * the latest probe did not fail. One failed probe is enough to stop offering new sessions, because a
     * replica that cannot answer its metrics endpoint in time is likely dying, and stale numbers would make
     * it look idle.
     */
    public boolean isFresh(long nowMillis, long staleAfterMillis) {
        return everSampled() && consecutiveFailures == 0 && sampleAgeMillis(nowMillis) <= staleAfterMillis;
    }
}
