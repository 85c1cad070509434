package io.scrouter.scorer;

/**
 * A ready replica offered to a placement policy, with everything a policy may weigh: only what a router
 * really knows (its own delayed probe samples, the shared session count, its own placements).
 *
 * @param replicaId             the pool's id for the replica
 * @param utilisation           smoothed utilisation (EWMA of {@link LoadSample#utilisation()}); meaningful
 *                              only when {@code fresh}
 * @param fresh                 a recent, successful sample backs {@code utilisation}
 * @param activeSessions        sessions bound to the replica in the shared store
 * @param placementsSinceSample new sessions placed on the replica since its last sample, by this router
 * @param lastUtilisation       the raw utilisation of the last sample, as the probe saw it; NaN if none
 * @param slots                 the replica's task slots in the last sample; 0 if unknown
 * @param sustainedUtilisation  slow average of utilisation (see {@code ReplicaLoad}); NaN if unknown
 * @param unseenPlacements      this router's recent placements that {@code sustainedUtilisation} does not show
 *                              yet (fading, not reset by a sample)
 * @param recentSessions        of {@code activeSessions}, those that sent a request within the shared store's
 *                              recent window (to the resolution at which routers record activity), plus this
 *                              router's placements since the count; idle notebooks are bound but not recent
 */
public record Candidate(String replicaId, double utilisation, boolean fresh, long activeSessions,
                        long placementsSinceSample, double lastUtilisation, long slots,
                        double sustainedUtilisation, double unseenPlacements, long recentSessions) {

    public Candidate {
        if (replicaId == null || replicaId.isEmpty()) {
            throw new IllegalArgumentException("replicaId must be a non-empty string");
        }
    }

    /**
     * A candidate whose store keeps no activity times: every bound session counts as recent, which is what the
     * policies weighed before the recent count existed.
     */
    public Candidate(String replicaId, double utilisation, boolean fresh, long activeSessions,
                     long placementsSinceSample, double lastUtilisation, long slots,
                     double sustainedUtilisation, double unseenPlacements) {
        this(replicaId, utilisation, fresh, activeSessions, placementsSinceSample, lastUtilisation, slots,
                sustainedUtilisation, unseenPlacements, activeSessions);
    }

    /**
     * A candidate known only by its smoothed utilisation, taken as the raw and sustained figures too, with
     * its size unknown; for policies and tests that need no more.
     */
    public Candidate(String replicaId, double utilisation, boolean fresh, long activeSessions,
                     long placementsSinceSample) {
        this(replicaId, utilisation, fresh, activeSessions, placementsSinceSample, utilisation, 0, utilisation,
                placementsSinceSample, activeSessions);
    }
}
