package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.SessionStore;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Live sessions per replica, as the shared store counts them, plus this router's own placements since the
 * last count. The store's figure covers every router (placements show up within one refresh); the local
 * delta covers the gap, so a burst on this router is seen at once.
 */
public final class SessionCounts {

    private final SessionStore store;
    private volatile Map<String, Long> stored = Map.of();
    private final Map<String, AtomicLong> sinceRefresh = new ConcurrentHashMap<>();

    public SessionCounts(SessionStore store) {
        this.store = store;
    }

    public long get(String replicaId) {
        AtomicLong local = sinceRefresh.get(replicaId);
        return stored.getOrDefault(replicaId, 0L) + (local == null ? 0 : local.get());
    }

    public void noteBound(String replicaId) {
        sinceRefresh.computeIfAbsent(replicaId, k -> new AtomicLong()).incrementAndGet();
    }

    /** Re-reads the counts; on failure keeps the old ones (with local placements still added). */
    public CompletableFuture<Void> refresh(Collection<String> replicaIds, long timeoutMillis) {
        Map<String, Long> localAtStart = snapshotLocal();
        return store.countSessions(replicaIds).orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .thenAccept(counts -> {
                    stored = Map.copyOf(counts);
                    // Placements made while the count ran may or may not be in it; subtracting only what was
                    // counted at the start keeps them (at worst counted twice until the next refresh).
                    localAtStart.forEach((id, n) -> sinceRefresh.computeIfPresent(id, (k, v) -> {
                        v.addAndGet(-n);
                        return v;
                    }));
                    sinceRefresh.keySet().retainAll(counts.keySet());
                })
                .exceptionally(e -> null);
    }

    private Map<String, Long> snapshotLocal() {
        Map<String, Long> copy = new HashMap<>();
        sinceRefresh.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }
}
