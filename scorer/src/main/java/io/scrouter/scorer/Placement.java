package io.scrouter.scorer;

/**
 * The outcome of placing a new session.
 *
 * @param replicaId the chosen replica
 * @param degraded  true when no replica had a fresh load sample, so the choice was made on session counts
 *                  alone: routing still works, but without load awareness
 */
public record Placement(String replicaId, boolean degraded) {
}
