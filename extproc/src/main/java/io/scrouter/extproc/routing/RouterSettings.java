package io.scrouter.extproc.routing;

/**
 * Timing knobs of the decision path.
 *
 * @param storeTimeoutMillis     deadline of one store call on the request path
 * @param refreshEveryMillis     how often a busy session's idle timer is pushed to the store
 * @param retryUnconfirmedMillis how often a fallback placement is offered to the store again
 * @param nearCacheMaxSize       most sessions held in memory
 * @param idleTtlMillis          a session idle longer than this is forgotten by the near-cache too
 * @param releaseGraceMillis     how long a released session still routes its late RPCs
 * @param settleMillis           after a store failure, new sessions keep being placed by rendezvous for this
 *                               long, so that routers whose view of the store's health differs for a moment
 *                               still agree, and fallback placements are written back before load-aware
 *                               placement resumes
 */
public record RouterSettings(long storeTimeoutMillis, long refreshEveryMillis, long retryUnconfirmedMillis,
                             long nearCacheMaxSize, long idleTtlMillis, long releaseGraceMillis,
                             long settleMillis) {
}
