package io.scrouter.loadtest.sim;

import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.SessionStore;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The shared session store as the simulated routers see it: the service's own in-memory store on the
 * simulated clock, except that session counts arrive {@code delayMillis} after they are read, as a Redis
 * round trip and the routers' refresh loop make them. Bindings themselves are atomic and immediate,
 * exactly as {@code SET NX} is.
 *
 * <p>Counts are kept up to date on every bind and release instead of scanning the store on every read
 * (the in-memory store counts by walking every session, which several routers polling every second would
 * make the simulation's largest cost); sessions never expire here, so both give the same numbers.
 *
 * <p>Recent sessions are counted as the Redis index counts them: by the moment each live session's idle timer
 * was last pushed (its bind, then every {@link #touch}), which is all the index's scores record. How often a
 * router pushes is the simulation's business ({@code refreshEvery}), as it is the router's.
 */
final class SharedStore implements SessionStore {

    /** Lets the simulation run a completion later on its own clock. */
    interface Later {
        void at(long atMillis, Runnable action);
    }

    private final InMemorySessionStore store;
    private final LongSupplier clock;
    private final Later later;
    private final long delayMillis;
    private final Map<String, Long> live = new java.util.HashMap<>();
    /** Live session → when its idle timer was last pushed. */
    private final Map<String, Long> pushedAt = new java.util.HashMap<>();
    /** Live session → the replica it is bound to. */
    private final Map<String, String> boundTo = new java.util.HashMap<>();

    SharedStore(LongSupplier clock, Later later, long delayMillis) {
        this.store = new InMemorySessionStore(new SessionTtls(Duration.ofDays(30), Duration.ofHours(1), Duration.ofMinutes(10)), clock);
        this.clock = clock;
        this.later = later;
        this.delayMillis = delayMillis;
    }

    @Override
    public CompletableFuture<Optional<Binding>> find(String sessionId) {
        return store.find(sessionId);
    }

    @Override
    public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replicaId) {
        boolean existed = store.find(sessionId).join().isPresent();
        CompletableFuture<Binding> bound = store.bindIfAbsent(sessionId, replicaId);
        if (!existed) {
            live.merge(replicaId, 1L, Long::sum);
            pushedAt.put(sessionId, clock.getAsLong());
            boundTo.put(sessionId, replicaId);
        }
        return bound;
    }

    @Override
    public CompletableFuture<Binding> claim(String sessionId, String replicaId) {
        throw new UnsupportedOperationException("the simulation binds with bindIfAbsent only, which keeps the counts");
    }

    @Override
    public CompletableFuture<io.scrouter.extproc.session.Lookup> findOrBind(String sessionId, String replicaIfNew) {
        throw new UnsupportedOperationException("the simulation binds with bindIfAbsent only, which keeps the counts");
    }

    @Override
    public CompletableFuture<Boolean> touch(String sessionId, String replicaId) {
        if (replicaId.equals(boundTo.get(sessionId))) {
            pushedAt.put(sessionId, clock.getAsLong());
        }
        return store.touch(sessionId, replicaId);
    }

    @Override
    public CompletableFuture<Void> release(String sessionId, String replicaId) {
        Optional<Binding> held = store.find(sessionId).join();
        if (held.isPresent() && held.get().equals(Binding.to(replicaId))) {
            live.merge(replicaId, -1L, Long::sum);
            pushedAt.remove(sessionId);
            boundTo.remove(sessionId);
        }
        return store.release(sessionId, replicaId);
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
        Map<String, Long> counts = new java.util.HashMap<>();
        for (String id : replicaIds) {
            counts.put(id, live.getOrDefault(id, 0L));
        }
        CompletableFuture<Map<String, Long>> arrives = new CompletableFuture<>();
        later.at(clock.getAsLong() + delayMillis, () -> arrives.complete(counts));
        return arrives;
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds, long recentWithinMillis) {
        Map<String, Long> counts = new java.util.HashMap<>();
        for (String id : replicaIds) {
            counts.put(id, 0L);
        }
        long after = clock.getAsLong() - recentWithinMillis;
        for (Map.Entry<String, Long> e : pushedAt.entrySet()) {
            if (e.getValue() > after) {
                counts.computeIfPresent(boundTo.get(e.getKey()), (k, v) -> v + 1);
            }
        }
        CompletableFuture<Map<String, Long>> arrives = new CompletableFuture<>();
        later.at(clock.getAsLong() + delayMillis, () -> arrives.complete(counts));
        return arrives;
    }

    @Override
    public CompletableFuture<Long> evictReplica(String replicaId) {
        return store.evictReplica(replicaId);
    }
}
