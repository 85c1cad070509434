package io.scrouter.scorer;

/**
 * A ready replica offered to a placement policy, with everything a policy may weigh.
 *
 * @param replicaId            the pool's id for the replica
 * @param utilisation          smoothed utilisation (EWMA of {@link LoadSample#utilisation()}); meaningful
 *                             only when {@code fresh}
 * @param fresh                a recent, successful sample backs {@code utilisation}
 * @param activeSessions       sessions bound to the replica in the shared store
 * @param placementsSinceSample new sessions placed on the replica since its last sample, by this router
 */
public record Candidate(String replicaId, double utilisation, boolean fresh, long activeSessions,
                        long placementsSinceSample) {

    public Candidate {
        if (replicaId == null || replicaId.isEmpty()) {
            throw new IllegalArgumentException("replicaId must be a non-empty string");
        }
    }
}
