package io.scrouter.extproc.routing;

/**
 * Timing knobs of the decision path.
 *
 * @param storeTimeoutMillis   deadline of one store call on the request path
 * @param refreshEveryMillis   how often a busy session's idle timer is pushed to the store
 * @param retryUnconfirmedMillis how often a fallback placement is offered to the store again
 * @param nearCacheMaxSize     most sessions held in memory
 * @param idleTtlMillis        a session idle longer than this is forgotten by the near-cache too
 */
public record RouterSettings(long storeTimeoutMillis, long refreshEveryMillis, long retryUnconfirmedMillis,
                             long nearCacheMaxSize, long idleTtlMillis) {
}
