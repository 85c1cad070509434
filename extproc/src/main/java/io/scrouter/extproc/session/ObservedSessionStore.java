package io.scrouter.extproc.session;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/** Wraps a store so that every call's latency and outcome reach a {@link StoreCallObserver} (metrics). */
public final class ObservedSessionStore implements SessionStore {

    private final SessionStore delegate;
    private final StoreCallObserver observer;

    public ObservedSessionStore(SessionStore delegate, StoreCallObserver observer) {
        this.delegate = delegate;
        this.observer = observer;
    }

    private <T> CompletableFuture<T> timed(String operation, Supplier<CompletableFuture<T>> call) {
        long start = System.nanoTime();
        CompletableFuture<T> f;
        try {
            f = call.get();
        } catch (RuntimeException e) {
            observer.completed(operation, System.nanoTime() - start, e);
            return CompletableFuture.failedFuture(e);
        }
        // The caller gets the store's own future, not a stage after it: a deadline that completes it first tells the
        // store the caller stopped waiting (see RedisSessionStore.findOrBind).
        f.whenComplete((v, e) -> observer.completed(operation, System.nanoTime() - start, e));
        return f;
    }

    @Override
    public CompletableFuture<Optional<Binding>> find(String sessionId) {
        return timed("find", () -> delegate.find(sessionId));
    }

    @Override
    public CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew) {
        return timed("find_or_bind", () -> delegate.findOrBind(sessionId, replicaIfNew));
    }

    @Override
    public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replicaId) {
        return timed("bind", () -> delegate.bindIfAbsent(sessionId, replicaId));
    }

    @Override
    public CompletableFuture<Binding> claim(String sessionId, String replicaId) {
        return timed("claim", () -> delegate.claim(sessionId, replicaId));
    }

    @Override
    public CompletableFuture<Boolean> touch(String sessionId, String replicaId) {
        return timed("touch", () -> delegate.touch(sessionId, replicaId));
    }

    @Override
    public CompletableFuture<Void> release(String sessionId, String replicaId) {
        return timed("release", () -> delegate.release(sessionId, replicaId));
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
        return timed("count", () -> delegate.countSessions(replicaIds));
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds,
                                                              long recentWithinMillis) {
        return timed("count", () -> delegate.countSessions(replicaIds, recentWithinMillis));
    }

    @Override
    public CompletableFuture<Counts> countLiveAndRecent(Collection<String> replicaIds, long recentWithinMillis) {
        return timed("count", () -> delegate.countLiveAndRecent(replicaIds, recentWithinMillis));
    }

    @Override
    public CompletableFuture<Long> evictReplica(String replicaId) {
        return timed("evict", () -> delegate.evictReplica(replicaId));
    }

    @Override
    public CompletableFuture<Void> prepare() {
        return delegate.prepare();
    }

    @Override
    public CompletableFuture<String> epoch() {
        return timed("epoch", delegate::epoch);
    }
}
