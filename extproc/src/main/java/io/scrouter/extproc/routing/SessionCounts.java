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
 *
 * <p>Besides every live session, it keeps the <em>recent</em> ones: those that sent a request within the recent
 * window ({@link SessionStore#countSessions(Collection, long)}). A notebook left open stays bound until its idle
 * TTL, so the plain count says a replica full of idle notebooks is as loaded as one whose few sessions all
 * work; the recent count does not. A session this router just placed is recent until the next count.
 */
public final class SessionCounts {

    /**
     * Default recent window. It must be well above {@code sessions.refreshEvery} (30 s by default), the
     * resolution at which routers record a session's activity; chosen in the simulator (loadtest/README.md,
     * "The default policy").
     */
    public static final long DEFAULT_RECENT_WINDOW_MILLIS = 120_000;

    private final SessionStore store;
    private final long recentWindowMillis;
    private volatile Map<String, Long> stored = Map.of();
    private volatile Map<String, Long> storedRecent = Map.of();
    private final Map<String, AtomicLong> sinceRefresh = new ConcurrentHashMap<>();

    public SessionCounts(SessionStore store) {
        this(store, DEFAULT_RECENT_WINDOW_MILLIS);
    }

    /** @param recentWindowMillis a session that sent a request this recently counts as recent */
    public SessionCounts(SessionStore store, long recentWindowMillis) {
        if (recentWindowMillis <= 0) {
            throw new IllegalArgumentException("recent window must be positive, got " + recentWindowMillis + " ms");
        }
        this.store = store;
        this.recentWindowMillis = recentWindowMillis;
    }

    /**
     * The recent window for routers that push a session's idle timer every {@code refreshEveryMillis}: the
     * default, or four pushes if that is longer, so that a session in use is never missed between two pushes.
     */
    public static long recentWindowFor(long refreshEveryMillis) {
        return Math.max(DEFAULT_RECENT_WINDOW_MILLIS, 4 * refreshEveryMillis);
    }

    public long get(String replicaId) {
        return Math.max(0, stored.getOrDefault(replicaId, 0L) + local(replicaId));
    }

    /** Sessions of {@code replicaId} that sent a request within the recent window, plus this router's placements. */
    public long recent(String replicaId) {
        return Math.max(0, storedRecent.getOrDefault(replicaId, 0L) + local(replicaId));
    }

    private long local(String replicaId) {
        AtomicLong local = sinceRefresh.get(replicaId);
        return local == null ? 0 : local.get();
    }

    public void noteBound(String replicaId) {
        sinceRefresh.computeIfAbsent(replicaId, k -> new AtomicLong()).incrementAndGet();
    }

    /**
     * A session of {@code replicaId} was released through this router: it stops counting now rather than at the
     * next refresh (the store drops it from the index at the same time, so the refresh agrees).
     */
    public void noteReleased(String replicaId) {
        sinceRefresh.compute(replicaId, (id, local) -> {
            AtomicLong l = local == null ? new AtomicLong() : local;
            // Never below zero: a release of a session no count here included yet must not hide a later one.
            if (stored.getOrDefault(id, 0L) + l.get() > 0) {
                l.decrementAndGet();
            }
            return l;
        });
    }

    /** Re-reads the counts; on failure keeps the old ones (with local placements still added). */
    public CompletableFuture<Void> refresh(Collection<String> replicaIds, long timeoutMillis) {
        Map<String, Long> localAtStart = snapshotLocal();
        return store.countLiveAndRecent(replicaIds, recentWindowMillis)
                .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .thenAccept(counts -> {
                    stored = Map.copyOf(counts.live());
                    storedRecent = Map.copyOf(counts.recent());
                    // Placements noted before the count started are in it (the store counts every binding it made
                    // before the call, and none after), so exactly those leave the local tally. A placement whose
                    // binding was made just before the call but noted here just after it is counted twice until
                    // the next refresh: the safe direction (a capped replica refuses one session early), and only
                    // for the microseconds between a binding's reply and its note.
                    localAtStart.forEach((id, n) -> sinceRefresh.computeIfPresent(id, (k, v) -> {
                        v.addAndGet(-n);
                        return v;
                    }));
                    sinceRefresh.keySet().retainAll(counts.live().keySet());
                })
                .exceptionally(e -> null);
    }

    private Map<String, Long> snapshotLocal() {
        Map<String, Long> copy = new HashMap<>();
        sinceRefresh.forEach((k, v) -> copy.put(k, v.get()));
        return copy;
    }
}
