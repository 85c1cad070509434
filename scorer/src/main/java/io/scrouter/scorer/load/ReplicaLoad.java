package io.scrouter.scorer.load;

import io.scrouter.scorer.Candidate;

/**
 * What the router knows about one replica's load at one moment. Immutable: the board replaces it whole.
 *
 * @param utilisation           EWMA of sampled utilisation; NaN before the first successful sample
 * @param lastUtilisation       the raw utilisation of the last successful sample; NaN before it
 * @param lastSampleAtMillis    when the last successful sample was taken; {@link Long#MIN_VALUE} if never
 * @param consecutiveFailures   probe failures since the last success
 * @param lastError             the last probe failure's message, or null
 * @param placementsSinceSample new sessions placed here since the last successful sample
 * @param slots                 task slots (Spark's maxTasks) in the last successful sample; 0 before it
 * @param sustainedUtilisation  a slow average of sampled utilisation (time constant of the board's sustain
 *                              horizon): the load the replica's sessions keep up, not the current burst; NaN
 *                              before the first sample
 * @param unseenPlacements      new sessions placed here whose load {@code sustainedUtilisation} cannot show yet:
 *                              each placement adds 1 and the sum fades as the slow average absorbs it
 */
public record ReplicaLoad(double utilisation, double lastUtilisation, long lastSampleAtMillis,
                          int consecutiveFailures, String lastError, long placementsSinceSample, long slots,
                          double sustainedUtilisation, double unseenPlacements) {

    static final ReplicaLoad UNKNOWN = new ReplicaLoad(Double.NaN, Double.NaN, Long.MIN_VALUE, 0, null, 0, 0,
            Double.NaN, 0.0);

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

    /**
     * This load as a placement policy sees it, for the replica {@code replicaId} with {@code activeSessions}
     * bound in the shared store. One place builds candidates, so the service and the simulator offer
     * policies exactly the same figures.
     */
    public Candidate candidate(String replicaId, boolean fresh, long activeSessions) {
        return candidate(replicaId, fresh, activeSessions, activeSessions);
    }

    /**
     * The same, with {@code recentSessions} of the bound sessions having sent a request within the store's recent
     * window (see {@link Candidate#recentSessions()}).
     */
    public Candidate candidate(String replicaId, boolean fresh, long activeSessions, long recentSessions) {
        return new Candidate(replicaId, utilisation, fresh, activeSessions, placementsSinceSample, lastUtilisation,
                slots, sustainedUtilisation, unseenPlacements, recentSessions);
    }
}
