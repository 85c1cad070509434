package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolChange;
import io.scrouter.extproc.pool.PoolSnapshot;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.extproc.session.Binding;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The bindings this router holds in memory, so that a known session is routed without a store call: bounded,
 * forgotten after the idle TTL, and fed by the other routers' new bindings ({@link #learnPeerBinding}). When a
 * replica's driver leaves the pool its sessions are dropped here at once ({@link #forgetDriversThatLeft}).
 *
 * <p>Reads for the admin view and tests are quiet: looking at a session must not keep it alive. The sessions are
 * held in {@link SessionTable}, with no object per session.
 */
public final class NearCache {

    /** Peer bindings to replicas the pool does not have yet are kept aside, up to this many, oldest dropped. */
    private static final int MAX_BINDINGS_TO_UNKNOWN_REPLICAS = 10_000;

    private final ServerPool pool;
    private final TimeSource time;
    private final long releaseGraceMillis;
    private final SessionTable table;
    private final Map<String, Binding> bindingsToUnknownReplicas = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Binding> eldest) {
            return size() > MAX_BINDINGS_TO_UNKNOWN_REPLICAS;
        }
    };

    NearCache(ServerPool pool, RouterSettings settings, TimeSource time) {
        this.pool = pool;
        this.time = time;
        this.releaseGraceMillis = settings.releaseGraceMillis();
        this.table = new SessionTable(settings.nearCacheMaxSize(), settings.idleTtlMillis() * 1_000_000L);
    }

    /** The session's entry, or null; a released binding past its grace is dropped (the store's key is gone too). */
    CachedBinding get(String session) {
        return table.get(session, time.nanoTime(), time.millis(), true);
    }

    /** The entry without counting a hit or resetting its idle timer (background work looks, it does not use). */
    CachedBinding peek(String session) {
        return table.get(session, time.nanoTime(), time.millis(), false);
    }

    /** Holds what the store answered; a released binding expires here when it does in the store, at the latest. */
    CachedBinding holdConfirmed(String session, Binding binding) {
        long now = time.millis();
        CachedBinding entry = binding.released()
                ? new CachedBinding(binding, true, now, now + releaseGraceMillis)
                : new CachedBinding(binding, true, now);
        table.put(session, entry, time.nanoTime());
        return entry;
    }

    void put(String session, CachedBinding entry) {
        table.put(session, entry, time.nanoTime());
    }

    /**
     * True for exactly one caller once {@code everyMillis} has passed since the session's last push to the store
     * (its idle timer, or the binding itself when unconfirmed): that caller pushes it; the others skip it.
     */
    boolean takeTurnToPush(String session, long nowMillis, long everyMillis) {
        return table.takeTurnToPush(session, nowMillis, everyMillis);
    }

    /** Live, confirmed sessions held here: what this router writes back after the store lost its data. */
    void forEachLiveConfirmed(BiConsumer<String, CachedBinding> action) {
        table.forEach(time.nanoTime(), (session, entry) -> {
            if (entry.confirmed && !entry.binding.lost()) {
                action.accept(session, entry);
            }
        });
    }

    /**
     * Another router bound a session: remember it, unless this router already holds a binding for it. Only
     * well-formed ids are taken. A binding to a replica this router's pool does not have yet (the other router
     * saw it join first) is kept aside and taken once the pool has it, rather than dropped while the feed moves
     * past it.
     */
    void learnPeerBinding(String sessionId, String replica) {
        if (!SessionIds.isValid(sessionId)) {
            return;
        }
        String session = SessionIds.canonical(sessionId);
        if (peek(session) != null) {
            // Held already: most often this router's own announcement coming back. Looked at quietly, as the
            // admin view does: hearing of a session is not using it, and must not push back its idle expiry.
            return;
        }
        Binding binding = Binding.to(replica);
        if (pool.snapshot().get(binding.replicaId()) == null) {
            synchronized (bindingsToUnknownReplicas) {
                bindingsToUnknownReplicas.put(session, binding);
            }
            return;
        }
        table.putIfAbsent(session, new CachedBinding(binding, true, time.millis()), time.nanoTime());
    }

    /** Takes the kept-aside peer bindings whose replica the pool now has. */
    void learnBindingsToNewReplicas() {
        synchronized (bindingsToUnknownReplicas) {
            bindingsToUnknownReplicas.entrySet().removeIf(e -> {
                if (pool.snapshot().get(e.getValue().replicaId()) == null) {
                    return false;
                }
                table.putIfAbsent(e.getKey(), new CachedBinding(e.getValue(), true, time.millis()), time.nanoTime());
                return true;
            });
        }
    }

    /** Drops the sessions of drivers that left the pool (or were replaced under the same id): they are gone. */
    void forgetDriversThatLeft(PoolChange change) {
        if (change.left().isEmpty()) {
            return;
        }
        table.removeIf(b -> !b.lost() && change.left().contains(b.replicaId()) && !stillServes(change.after(), b));
    }

    /** True if the pool still has the driver this binding names (a new driver under the id does not count). */
    private static boolean stillServes(PoolSnapshot snapshot, Binding binding) {
        Replica r = snapshot.get(binding.replicaId());
        return r != null && binding.instance() != null && binding.instance().equals(r.identity());
    }

    /** Forgets the idle sessions of one part of the table (a sixteenth), in turn: called on every pool poll. */
    void sweep() {
        table.sweepNext(time.nanoTime(), time.millis());
    }

    /** Lookups on the request path that found the session, since start (for the hit-ratio metric). */
    public long hitCount() {
        return table.hits();
    }

    /** Lookups on the request path that did not find the session, since start. */
    public long missCount() {
        return table.misses();
    }

    /** Sessions held (idle ones included until they are met or swept). */
    public long size() {
        return table.size();
    }

    /** The binding held for a session, if any, read quietly (for the admin view and tests). */
    public Optional<Binding> binding(String sessionId) {
        if (!SessionIds.isValid(sessionId)) {
            return Optional.empty();
        }
        return Optional.ofNullable(peek(SessionIds.canonical(sessionId))).map(e -> e.binding);
    }
}
