package io.scrouter.extproc.routing;

import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.SessionStore;

/**
 * What a routed request does to its session in the store, in the background and never awaited: keeps a busy
 * session alive (at most once per {@code refreshEvery}), releases it on {@code ReleaseSession}, revives it when
 * it is used after a release, and offers an unconfirmed placement to the store again.
 */
final class SessionUpkeep {

    private final SessionStore store;
    private final GuardedStore guard;
    private final NearCache nearCache;
    private final WriteBacks writeBacks;
    private final PlacementProposer proposer;
    private final TimeSource time;
    private final RouterSettings settings;

    SessionUpkeep(SessionStore store, GuardedStore guard, NearCache nearCache, WriteBacks writeBacks,
                  PlacementProposer proposer, TimeSource time, RouterSettings settings) {
        this.proposer = proposer;
        this.store = store;
        this.guard = guard;
        this.nearCache = nearCache;
        this.writeBacks = writeBacks;
        this.time = time;
        this.settings = settings;
    }

    /** After a request of {@code kind} was routed to {@code replica} (as bound) by {@code entry}. */
    void afterRoute(String session, CachedBinding entry, String replica, RpcKind kind) {
        switch (kind) {
            case RELEASE_SESSION -> release(session, entry);
            case CLEANUP -> {
                // Routed by the binding it found; touches nothing.
            }
            case WORK -> {
                if (entry.binding.released()) {
                    revive(session, replica);
                } else {
                    keepAlive(session, entry, replica);
                }
            }
        }
    }

    /**
     * The ReleaseSession call itself goes to the replica; the binding stays for the release grace, so RPCs
     * the client sends after it (an asynchronous ReleaseExecute) reach the same replica, and a release sent
     * by someone else than the session's owner does not strand the owner (see {@link SessionStore#release}).
     */
    private void release(String session, CachedBinding entry) {
        if (entry.binding.state() != Binding.State.LIVE) {
            return;
        }
        long now = time.millis();
        nearCache.put(session, new CachedBinding(entry.binding.as(Binding.State.RELEASED), entry.confirmed, now,
                now + settings.releaseGraceMillis()));
        proposer.released(entry.binding.replicaId());
        guard.inBackground(store.release(session, entry.binding.bound())).exceptionally(e -> {
            WriteBacks.backgroundFailed("release", session, e);
            return null;
        });
    }

    /** A released session is used again: it is live, counted and kept alive as before its release. */
    private void revive(String session, String replica) {
        nearCache.put(session, new CachedBinding(Binding.to(replica), true, time.millis()));
        guard.inBackground(store.touch(session, replica)).whenComplete((revived, error) -> {
            if (error != null) {
                WriteBacks.backgroundFailed("revive", session, error);
            } else if (!revived) {
                // The released key expired meanwhile: bind the session again where it lives.
                writeBacks.confirm(session, replica);
            }
        });
    }

    private void keepAlive(String session, CachedBinding entry, String replica) {
        long now = time.millis();
        // Most requests come well within the push interval: the entry as read says so without a second lookup.
        if (now - entry.pushedAtMillis < settings.refreshEveryMillis()
                || !nearCache.takeTurnToPush(session, now, settings.refreshEveryMillis())) {
            return;
        }
        if (!entry.confirmed) {
            writeBacks.claim(session, replica);
            return;
        }
        guard.inBackground(store.touch(session, replica)).whenComplete((stillBound, error) -> {
            if (error != null) {
                WriteBacks.backgroundFailed("idle-timer push", session, error);
            } else if (!stillBound) {
                // The store lost the binding (flushed, failed over, expired early): write ours back.
                writeBacks.confirm(session, replica);
            }
        });
    }
}
