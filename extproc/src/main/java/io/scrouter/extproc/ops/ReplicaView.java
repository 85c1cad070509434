package io.scrouter.extproc.ops;

/**
 * One replica as an operator sees it: where it is, its state, and every input of its score.
 *
 * @param group               the replica group it serves ({@code default} when published without one)
 * @param sampleAgeMillis     age of the last successful load sample, or -1 if it was never sampled
 * @param score               the placement policy's score (lower wins), NaN if the policy has none
 * @param probeFailures       failed probes since the replica joined the pool
 */
public record ReplicaView(String id, String group, String grpcAddress, String metricsUrl, String state,
                          double utilisation,
                          double lastUtilisation, boolean fresh, long sampleAgeMillis, int consecutiveFailures,
                          String lastError, long activeSessions, long placementsSinceSample, double score,
                          long probeFailures) {
}
