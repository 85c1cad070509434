package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.PoolSnapshot;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.PlacementProposer.Proposal;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionStore;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Decides the replica of each Spark Connect request: the heart of the service.
 *
 * <p>Order of work, cheapest first:
 * <ol>
 *   <li>Check the path and session id (no I/O).</li>
 *   <li>Near-cache hit: answer at once, on the caller's thread ({@link NearCache}); the store hears of it in
 *       the background ({@link SessionUpkeep}).</li>
 *   <li>Miss: propose where the session would go if new ({@link PlacementProposer}), then one atomic
 *       find-or-bind call returns the existing binding or creates the proposed one; whichever binding is in
 *       the store is the one used ({@link GuardedStore}: deadline, one retry, circuit breaker).</li>
 *   <li>Store unreachable: place by rendezvous hashing over the ready replicas, which every router computes
 *       identically, and offer that binding to the store later ({@link WriteBacks}).</li>
 * </ol>
 * Every address it returns comes from the {@link ServerPool} snapshot in force. Thread-safe; never blocks.
 */
public final class SessionRouter {

    private final ServerPool pool;
    private final PoolRefresher poolRefresher;
    private final SessionStore store;
    private final GuardedStore guard;
    private final NearCache nearCache;
    private final PlacementProposer proposer;
    private final SessionUpkeep upkeep;
    private final WriteBacks writeBacks;

    SessionRouter(ServerPool pool, PoolRefresher poolRefresher, SessionStore store, GuardedStore guard,
                  NearCache nearCache, PlacementProposer proposer, SessionUpkeep upkeep, WriteBacks writeBacks) {
        this.pool = pool;
        this.poolRefresher = poolRefresher;
        this.store = store;
        this.guard = guard;
        this.nearCache = nearCache;
        this.proposer = proposer;
        this.upkeep = upkeep;
        this.writeBacks = writeBacks;
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
        RpcKind kind = RpcKind.of(method.get());

        CachedBinding cached = nearCache.get(session);
        if (cached == null) {
            return lookUp(session, kind);
        }
        Decision d = routeKnown(session, cached.binding, pool.snapshot());
        if (d instanceof Decision.Route route) {
            upkeep.afterRoute(session, cached, route.replica().boundAs(), kind);
            return done(d);
        }
        if (cached.binding.routable() && pool.snapshot().get(cached.binding.replicaId()) == null) {
            // Bound to a replica this router does not know: maybe our pool is behind. Look again.
            return resolveUnknownReplica(session, cached.binding, kind);
        }
        return done(d);
    }

    /**
     * A session this router does not hold. Work proposes a placement first, so that one atomic call both reads
     * an existing binding and creates a missing one: a single round trip either way. Clean-up calls never
     * bind: a late ReleaseExecute of a session whose binding is gone must not create one.
     */
    private CompletableFuture<Decision> lookUp(String session, RpcKind kind) {
        if (!guard.mayCall()) {
            return done(kind == RpcKind.WORK ? placeWithoutStore(session) : Rejections.storeUnreachable());
        }
        PoolSnapshot snapshot = pool.snapshot();
        Proposal proposal = kind == RpcKind.WORK ? proposer.propose(session, snapshot, settling()) : null;
        CompletableFuture<Lookup> call = proposal == null
                ? guard.onRequestPath(() -> store.find(session))
                        .thenApply(found -> found.map(b -> new Lookup(b, false)).orElse(null))
                : guard.onRequestPath(() -> store.findOrBind(session, proposal.replica().boundAs()));
        return call.handle((lookup, error) -> {
            if (error != null) {
                return done(storeUnanswered(session, kind, error));
            }
            if (lookup == null) {
                if (kind == RpcKind.WORK) {
                    return done(Rejections.noReadyReplica(snapshot.size()));
                }
                // Just after an outage or a data loss the store may not hold a live session yet (its router is
                // writing it back): ask for a retry then, and say it is gone only when the store is settled.
                return done(settling() ? Rejections.storeSettling() : Rejections.notBound(session));
            }
            CachedBinding entry = nearCache.holdConfirmed(session, lookup.binding());
            if (lookup.created()) {
                proposer.taken(proposal);
                upkeep.afterRoute(session, entry, proposal.replica().boundAs(), kind);
                return done(new Decision.Route(proposal.replica(), proposal.outcome()));
            }
            Binding b = lookup.binding();
            Decision d = routeKnown(session, b, pool.snapshot());
            if (d instanceof Decision.Route route) {
                upkeep.afterRoute(session, entry, route.replica().boundAs(), kind);
                return done(d);
            }
            // A replica id this router does not know may be a pool that is behind: look again. A known id with
            // another driver is final.
            return b.lost() || pool.snapshot().get(b.replicaId()) != null ? done(d)
                    : resolveUnknownReplica(session, b, kind);
        }).thenCompose(f -> f);
    }

    /**
     * The store did not answer a request-path call (after one retry). While the store is believed healthy
     * this is a blip: the session may well exist, and guessing could move it, so the client is asked to
     * retry (Spark's client retries UNAVAILABLE on its own). Once repeated failures open the breaker the
     * store is down, not blipping: then rendezvous placement keeps new sessions flowing, identically on
     * every router. A clean-up call has nothing to fall back to: it must not bind.
     */
    private Decision storeUnanswered(String session, RpcKind kind, Throwable error) {
        if (kind == RpcKind.WORK && guard.breakerOpen()) {
            return placeWithoutStore(session);
        }
        return GuardedStore.unanswered(error);
    }

    /** Store unreachable: rendezvous over ready replicas, held locally and offered to the store later. */
    private Decision placeWithoutStore(String session) {
        PoolSnapshot snapshot = pool.snapshot();
        if (snapshot.ready().isEmpty()) {
            return Rejections.noReadyReplica(snapshot.size());
        }
        Replica r = proposer.rendezvous(session, snapshot.ready());
        writeBacks.placedWithoutStore(session, r);
        return new Decision.Route(r, Decision.Outcome.FALLBACK);
    }

    /**
     * True while routers must place new sessions alike without trusting the store's view: shortly after the
     * store failed (routers notice an outage, and its end, at slightly different moments), and while sessions
     * lost with the store's data are being written back.
     */
    private boolean settling() {
        return guard.recentlyFailed() || writeBacks.restoring();
    }

    private static Decision routeKnown(String session, Binding binding, PoolSnapshot snapshot) {
        if (binding.lost()) {
            return Rejections.sessionLost(session, binding.replicaId());
        }
        Replica r = snapshot.get(binding.replicaId());
        if (r == null) {
            return Rejections.sessionLost(session, binding.replicaId());
        }
        if (binding.instance() != null && !binding.instance().equals(r.identity())) {
            // Same id, another driver (re-registered at a new address, or restarted in place): the session's state
            // was in the old one. Checked on every request, whether or not the tombstones are written yet.
            return Rejections.sessionLost(session, binding.replicaId());
        }
        return new Decision.Route(r, Decision.Outcome.KNOWN);
    }

    private CompletableFuture<Decision> resolveUnknownReplica(String session, Binding binding, RpcKind kind) {
        return poolRefresher.refresh().thenApply(snapshot -> {
            Decision d = routeKnown(session, binding, snapshot);
            if (d instanceof Decision.Route route) {
                CachedBinding entry = nearCache.peek(session);
                if (entry != null) {
                    upkeep.afterRoute(session, entry, route.replica().boundAs(), kind);
                }
            }
            return d;
        });
    }

    /**
     * What {@link #decide} would answer for a new session, computed without the store, the near-cache or any
     * counter: for warming the decision path before the router reports ready. Never used for real requests.
     */
    public Decision dryRun(String path, String sessionId) {
        Optional<String> method = SparkRpc.method(path);
        if (method.isEmpty()) {
            return Rejections.notSparkConnect(path);
        }
        if (sessionId == null) {
            return Rejections.missingSessionId();
        }
        if (!SessionIds.isValid(sessionId)) {
            return Rejections.malformedSessionId(sessionId);
        }
        PoolSnapshot snapshot = pool.snapshot();
        Proposal proposal = proposer.propose(SessionIds.canonical(sessionId), snapshot, settling());
        return proposal == null ? Rejections.noReadyReplica(snapshot.size())
                : new Decision.Route(proposal.replica(), proposal.outcome());
    }

    private static CompletableFuture<Decision> done(Decision d) {
        return CompletableFuture.completedFuture(d);
    }
}
