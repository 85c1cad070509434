package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolChange;
import io.scrouter.extproc.session.BindingFeed;

/**
 * Brings this router's view in line with the store and the pool, on every pool poll and on every pool change:
 * learns the other routers' bindings, marks the sessions of departed drivers lost, and writes back what the
 * store is missing.
 */
public final class Reconciler {

    private final NearCache nearCache;
    private final BindingFeed feed;
    private final GuardedStore guard;
    private final LostDrivers lostDrivers;
    private final WriteBacks writeBacks;

    Reconciler(NearCache nearCache, BindingFeed feed, GuardedStore guard, LostDrivers lostDrivers,
               WriteBacks writeBacks) {
        this.nearCache = nearCache;
        this.feed = feed;
        this.guard = guard;
        this.lostDrivers = lostDrivers;
        this.writeBacks = writeBacks;
    }

    /**
     * One pool poll's work. The binding feed is first read here, after the pool has been read: entries for
     * replicas the pool does not know yet would otherwise wait aside (see {@link NearCache#learnPeerBinding}).
     */
    public void reconcile() {
        // Catch up on other routers' new bindings, including any announced while this one was cut off.
        nearCache.learnBindingsToNewReplicas();
        feed.catchUp(nearCache::learnPeerBinding);
        if (!guard.breakerOpen()) {
            lostDrivers.markPending();
        }
        writeBacks.onPoll();
        nearCache.sweep();
    }

    /** The pool changed: bindings waiting for a new replica are taken, departed drivers' sessions dropped. */
    void onPoolChange(PoolChange change) {
        if (!change.joined().isEmpty()) {
            nearCache.learnBindingsToNewReplicas();
        }
        nearCache.forgetDriversThatLeft(change);
        lostDrivers.onPoolChange(change);
    }
}
