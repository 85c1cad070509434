package io.scrouter.extproc.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.grpc.Status;
import io.scrouter.extproc.pool.PoolChange;
import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.PoolSnapshot;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.Placement;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.load.ReplicaLoad;
import io.scrouter.scorer.policy.Placer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Decides the replica of each Spark Connect request: the heart of the service.
 *
 * <p>Order of work, cheapest first:
 * <ol>
 *   <li>Check the path and session id (no I/O).</li>
 *   <li>Near-cache hit: answer at once, on the caller's thread. The session's idle timer is pushed to the
 *       store at most once per {@code refreshEvery}, in the background, never awaited.</li>
 *   <li>Miss: read the store ({@code GETEX}); if unbound, place with the policy and bind with
 *       {@code SET NX}, adopting whatever binding wins.</li>
 *   <li>Store unreachable: place by rendezvous hashing over the ready replicas, which every router computes
 *       identically, and offer that binding to the store again later.</li>
 * </ol>
 * Every address it returns comes from the {@link ServerPool} snapshot in force. Thread-safe; never blocks.
 */
public final class SessionRouter {

    private static final Logger LOG = LoggerFactory.getLogger(SessionRouter.class);

    private final ServerPool pool;
    private final PoolRefresher poolRefresher;
    private final SessionStore store;
    private final LoadBoard board;
    private final Placer placer;
    private final SessionCounts counts;
    private final StoreHealth storeHealth;
    private final RouterSettings settings;
    private final LongSupplier clock;
    private final Cache<String, CachedBinding> nearCache;
    private volatile boolean degraded;

    public SessionRouter(ServerPool pool, PoolRefresher poolRefresher, SessionStore store, LoadBoard board,
                         Placer placer, SessionCounts counts, StoreHealth storeHealth, RouterSettings settings,
                         LongSupplier clockMillis) {
        this.pool = pool;
        this.poolRefresher = poolRefresher;
        this.store = store;
        this.board = board;
        this.placer = placer;
        this.counts = counts;
        this.storeHealth = storeHealth;
        this.settings = settings;
        this.clock = clockMillis;
        this.nearCache = Caffeine.newBuilder()
                .maximumSize(settings.nearCacheMaxSize())
                .expireAfterAccess(Duration.ofMillis(settings.idleTtlMillis()))
                .recordStats()
                .build();
        pool.onChange(this::onPoolChange);
    }

    /**
     * Decides one request.
     *
     * @param path      the {@code :path} header
     * @param sessionId the {@code x-spark-session-id} value, or null when absent
     */
    public CompletableFuture<Decision> decide(String path, String sessionId) {
        Optional<String> method = SparkRpc.method(path);
        if (method.isEmpty()) {
            return done(Rejections.notSparkConnect(path));
        }
        if (sessionId == null) {
            return done(Rejections.missingSessionId());
        }
        if (!SessionIds.isValid(sessionId)) {
            return done(Rejections.malformedSessionId(sessionId));
        }
        String session = SessionIds.canonical(sessionId);
        boolean release = SparkRpc.RELEASE_SESSION.equals(method.get());

        CachedBinding cached = nearCache.getIfPresent(session);
        if (cached != null) {
            Decision d = routeKnown(session, cached.binding, pool.snapshot());
            if (d instanceof Decision.Route route) {
                afterRoute(session, cached, route, release);
                return done(d);
            }
            if (!cached.binding.lost()) {
                // Bound to a replica this router does not know: maybe our pool is behind. Look again.
                return resolveUnknownReplica(session, cached.binding, release);
            }
            return done(d);
        }
        return lookUp(session, release);
    }

    private CompletableFuture<Decision> lookUp(String session, boolean release) {
        long now = clock.getAsLong();
        if (!storeHealth.shouldTry(now)) {
            return done(fallback(session));
        }
        return withDeadline(store.find(session)).handle((found, error) -> {
            if (error != null) {
                storeFailed(error);
                return done(fallback(session));
            }
            storeHealth.success();
            if (found.isPresent()) {
                Binding b = found.get();
                CachedBinding entry = new CachedBinding(b, true, clock.getAsLong());
                nearCache.put(session, entry);
                Decision d = routeKnown(session, b, pool.snapshot());
                if (d instanceof Decision.Route route) {
                    afterRoute(session, entry, route, release);
                    return done(d);
                }
                return b.lost() ? done(d) : resolveUnknownReplica(session, b, release);
            }
            return place(session);
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Decision> place(String session) {
        PoolSnapshot snapshot = pool.snapshot();
        Optional<Placement> placement = placer.place(candidates(snapshot), ThreadLocalRandom.current());
        if (placement.isEmpty()) {
            return done(Rejections.noReadyReplica(snapshot.size()));
        }
        noteDegraded(placement.get().degraded());
        String chosen = placement.get().replicaId();
        return withDeadline(store.bindIfAbsent(session, chosen)).handle((winner, error) -> {
            if (error != null) {
                storeFailed(error);
                return fallback(session);
            }
            storeHealth.success();
            nearCache.put(session, new CachedBinding(winner, true, clock.getAsLong()));
            if (winner.equals(Binding.to(chosen))) {
                board.notePlacement(chosen);
                counts.noteBound(chosen);
                Replica r = pool.snapshot().get(chosen);
                if (r != null) {
                    return new Decision.Route(r, placement.get().degraded()
                            ? Decision.Outcome.PLACED_DEGRADED : Decision.Outcome.PLACED);
                }
            }
            // Another router (or an earlier request of this session) bound it first: follow that binding.
            return routeKnown(session, winner, pool.snapshot());
        });
    }

    private List<Candidate> candidates(PoolSnapshot snapshot) {
        long now = clock.getAsLong();
        List<Candidate> out = new ArrayList<>(snapshot.ready().size());
        for (Replica r : snapshot.ready()) {
            ReplicaLoad load = board.get(r.id());
            boolean fresh = r.metricsUrl() != null && load.isFresh(now, board.staleAfterMillis());
            out.add(new Candidate(r.id(), load.utilisation(), fresh, counts.get(r.id()),
                    load.placementsSinceSample()));
        }
        return out;
    }

    /** Store unreachable: rendezvous over ready replicas, remembered locally and offered to the store later. */
    private Decision fallback(String session) {
        List<Replica> ready = pool.snapshot().ready();
        if (ready.isEmpty()) {
            return Rejections.noReadyReplica(pool.snapshot().size());
        }
        Replica r = Rendezvous.pick(session, ready);
        // Pushed "long ago", so the first hit after retryUnconfirmed offers it to the store.
        nearCache.put(session, new CachedBinding(Binding.to(r.id()), false, clock.getAsLong()
                - settings.refreshEveryMillis() + settings.retryUnconfirmedMillis()));
        return new Decision.Route(r, Decision.Outcome.FALLBACK);
    }

    private Decision routeKnown(String session, Binding binding, PoolSnapshot snapshot) {
        if (binding.lost()) {
            return Rejections.sessionLost(session, binding.replicaId());
        }
        Replica r = snapshot.get(binding.replicaId());
        if (r == null) {
            return Rejections.sessionLost(session, binding.replicaId());
        }
        return new Decision.Route(r, Decision.Outcome.KNOWN);
    }

    private CompletableFuture<Decision> resolveUnknownReplica(String session, Binding binding, boolean release) {
        return poolRefresher.refresh().thenApply(snapshot -> {
            Decision d = routeKnown(session, binding, snapshot);
            if (d instanceof Decision.Route route) {
                CachedBinding entry = nearCache.getIfPresent(session);
                if (entry != null) {
                    afterRoute(session, entry, route, release);
                }
            }
            return d;
        });
    }

    private void afterRoute(String session, CachedBinding entry, Decision.Route route, boolean release) {
        String replicaId = route.replica().id();
        if (release) {
            // The ReleaseSession call itself still goes to the replica; the binding is freed behind it.
            nearCache.invalidate(session);
            withDeadline(store.release(session, replicaId)).exceptionally(e -> {
                LOG.debug("session={} release of binding failed: {}", session, e.toString());
                return null;
            });
            return;
        }
        long now = clock.getAsLong();
        if (!entry.claimPush(now, settings.refreshEveryMillis())) {
            return;
        }
        if (!entry.confirmed) {
            confirm(session, replicaId);
            return;
        }
        withDeadline(store.touch(session, replicaId)).whenComplete((stillBound, error) -> {
            if (error != null) {
                storeFailed(error);
            } else if (!stillBound) {
                // The store lost the binding (flushed, failed over, expired early): write ours back.
                confirm(session, replicaId);
            }
        });
    }

    /** Offers a binding the store does not hold; adopts the store's if another router's differs. */
    private void confirm(String session, String replicaId) {
        withDeadline(store.bindIfAbsent(session, replicaId)).whenComplete((winner, error) -> {
            if (error != null) {
                storeFailed(error);
                return;
            }
            storeHealth.success();
            nearCache.put(session, new CachedBinding(winner, true, clock.getAsLong()));
            if (!winner.equals(Binding.to(replicaId))) {
                LOG.warn("session={} was routed to {} while the store was unreachable, but the store binds it to {}; "
                        + "following the store from now on", session, replicaId, winner.replicaId());
            }
        });
    }

    private void onPoolChange(PoolChange change) {
        if (change.left().isEmpty()) {
            return;
        }
        // Drop cached bindings to departed replicas; the next request reads the store's tombstone.
        nearCache.asMap().values().removeIf(e -> change.left().contains(e.binding.replicaId())
                && !e.binding.lost());
        for (String id : change.left()) {
            store.evictReplica(id).whenComplete((n, error) -> {
                if (error != null) {
                    LOG.warn("replica={} left the pool; marking its sessions lost failed ({}); another router or "
                            + "the next change will retry", id, error.toString());
                } else if (n > 0) {
                    LOG.info("replica={} left the pool; {} sessions bound to it now get a 'session lost' error",
                            id, n);
                }
            });
        }
    }

    private void storeFailed(Throwable error) {
        boolean wasOpen = storeHealth.isOpen();
        storeHealth.failure(clock.getAsLong());
        if (!wasOpen && storeHealth.isOpen()) {
            LOG.warn("session store unreachable ({}); new sessions are placed by rendezvous hashing and known "
                    + "sessions keep their replica until it is back", error.toString());
        }
    }

    private void noteDegraded(boolean now) {
        if (now != degraded) {
            degraded = now;
            if (now) {
                LOG.warn("no replica has fresh load metrics; placing new sessions by session count only. Check "
                        + "that the routers can reach each replica's Spark REST API (metricsUrl)");
            } else {
                LOG.info("load metrics are fresh again; placement is load-aware");
            }
        }
    }

    /** True while new sessions are placed without load figures (every replica's metrics stale). */
    public boolean isDegraded() {
        return degraded;
    }

    /** Near-cache hit and miss counts since start (for the hit-ratio metric). */
    public com.github.benmanes.caffeine.cache.stats.CacheStats nearCacheStats() {
        return nearCache.stats();
    }

    /** Every replica of the pool as the placement policy would see it now (for the admin view and metrics). */
    public List<Candidate> candidatesNow() {
        long now = clock.getAsLong();
        List<Candidate> out = new ArrayList<>();
        for (Replica r : pool.snapshot().all()) {
            ReplicaLoad load = board.get(r.id());
            boolean fresh = r.metricsUrl() != null && load.isFresh(now, board.staleAfterMillis());
            out.add(new Candidate(r.id(), load.utilisation(), fresh, counts.get(r.id()), load.placementsSinceSample()));
        }
        return out;
    }

    public Placer placer() {
        return placer;
    }

    /** True while the session store is skipped after repeated failures. */
    public boolean storeCircuitOpen() {
        return storeHealth.isOpen();
    }

    /** Sessions held in this router's near-cache (approximate). */
    public long nearCacheSize() {
        return nearCache.estimatedSize();
    }

    /** The cached binding of a session, if this router holds one (for the admin view and tests). */
    public Optional<Binding> cachedBinding(String sessionId) {
        return Optional.ofNullable(nearCache.getIfPresent(SessionIds.canonical(sessionId))).map(e -> e.binding);
    }

    private <T> CompletableFuture<T> withDeadline(CompletableFuture<T> call) {
        return call.orTimeout(settings.storeTimeoutMillis(), TimeUnit.MILLISECONDS);
    }

    private static CompletableFuture<Decision> done(Decision d) {
        return CompletableFuture.completedFuture(d);
    }

    static Status.Code code(Decision d) {
        return d instanceof Decision.Reject r ? r.code() : Status.Code.OK;
    }
}
