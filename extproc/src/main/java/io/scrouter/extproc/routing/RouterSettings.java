package io.scrouter.extproc.routing;

import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;

/**
 * Timing knobs of the decision path, from the configuration ({@link #from}); tests start from {@link #defaults}
 * and change what they exercise with the {@code with...} methods.
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
 * @param breakerFailures        consecutive failed requests that open the store's circuit breaker
 * @param breakerCoolDownMillis  while open, one trial call per this long
 */
public record RouterSettings(long storeTimeoutMillis, long refreshEveryMillis, long retryUnconfirmedMillis,
                             long nearCacheMaxSize, long idleTtlMillis, long releaseGraceMillis,
                             long settleMillis, int breakerFailures, long breakerCoolDownMillis) {

    /** A fallback placement is offered to the store again at least this often, however rare refreshes are. */
    private static final long MAX_RETRY_UNCONFIRMED_MILLIS = 1000;

    /** The settings a configuration file asks for. */
    public static RouterSettings from(RouterConfig config) {
        RouterConfig.Sessions s = config.sessions();
        RouterConfig.StoreCalls calls = config.storeCalls();
        return new RouterSettings(calls.timeout().toMillis(), s.refreshEvery().toMillis(),
                Math.min(MAX_RETRY_UNCONFIRMED_MILLIS, s.refreshEvery().toMillis()), s.nearCacheMaxSize(),
                s.idleTtl().toMillis(), s.releaseGrace().toMillis(), calls.settleAfterOutage().toMillis(),
                calls.breakerFailures(), calls.breakerCoolDown().toMillis());
    }

    /** The settings of a configuration that sets nothing (the embedded default's timings). */
    public static RouterSettings defaults() {
        return from(ConfigLoader.withDefaults());
    }

    public RouterSettings withStoreTimeoutMillis(long millis) {
        return new RouterSettings(millis, refreshEveryMillis, retryUnconfirmedMillis, nearCacheMaxSize,
                idleTtlMillis, releaseGraceMillis, settleMillis, breakerFailures, breakerCoolDownMillis);
    }

    public RouterSettings withSettleMillis(long millis) {
        return new RouterSettings(storeTimeoutMillis, refreshEveryMillis, retryUnconfirmedMillis, nearCacheMaxSize,
                idleTtlMillis, releaseGraceMillis, millis, breakerFailures, breakerCoolDownMillis);
    }

    public RouterSettings withRefreshEveryMillis(long millis) {
        return new RouterSettings(storeTimeoutMillis, millis, Math.min(MAX_RETRY_UNCONFIRMED_MILLIS, millis),
                nearCacheMaxSize, idleTtlMillis, releaseGraceMillis, settleMillis, breakerFailures,
                breakerCoolDownMillis);
    }
}
