package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.PoolSnapshot;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.PlacementProposer.Proposal;
import io.scrouter.extproc.routing.ReplicaGroups.Access;
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
    private final ReplicaGroups groups;

    SessionRouter(ServerPool pool, PoolRefresher poolRefresher, SessionStore store, GuardedStore guard,
                  NearCache nearCache, PlacementProposer proposer, SessionUpkeep upkeep, WriteBacks writeBacks,
                  ReplicaGroups groups) {
        this.groups = groups;
        this.pool = pool;
        this.poolRefresher = poolRefresher;
        this.store = store;
        this.guard = guard;
        this.nearCache = nearCache;
        this.proposer = proposer;
        this.upkeep = upkeep;
        this.writeBacks = writeBacks;
    }

    /** Decides one request. */
    public CompletableFuture<Decision> decide(Request request) {
        Optional<String> method = SparkRpc.method(request.path());
        if (method.isEmpty()) {
            return done(Rejections.notSparkConnect(request.path()));
        }
        String sessionId = request.sessionId();
        if (sessionId == null) {
            return done(Rejections.missingSessionId());
        }
        if (!SessionIds.isValid(sessionId)) {
            return done(Rejections.malformedSessionId(sessionId));
        }
        ReplicaGroups.Resolution resolution = groups.resolve(request.group(), request.groupCount());
        if (resolution instanceof ReplicaGroups.Refused refused) {
            return done(refused.reject());
        }
        Access access = ((ReplicaGroups.Granted) resolution).access();
        String session = SessionIds.canonical(sessionId);
        RpcKind kind = RpcKind.of(method.get());

        CachedBinding cached = nearCache.get(session);
        if (cached == null) {
            return lookUp(session, kind, access);
        }
        Decision d = routeKnown(session, cached.binding, pool.snapshot(), access);
        if (d instanceof Decision.Route route) {
            upkeep.afterRoute(session, cached, route.replica().boundAs(), kind);
            return done(d);
        }
        if (cached.binding.routable() && pool.snapshot().get(cached.binding.replicaId()) == null) {
            // Bound to a replica this router does not know: maybe our pool is behind. Look again.
            return resolveUnknownReplica(session, cached.binding, kind, access);
        }
        return done(d);
    }

    /**
     * A session this router does not hold. Work proposes a placement first, so that one atomic call both reads
     * an existing binding and creates a missing one: a single round trip either way. Clean-up calls never
     * bind: a late ReleaseExecute of a session whose binding is gone must not create one.
     */
    private CompletableFuture<Decision> lookUp(String session, RpcKind kind, Access access) {
        if (!guard.mayCall()) {
            return done(kind == RpcKind.WORK ? placeWithoutStore(session, access) : Rejections.storeUnreachable());
        }
        PoolSnapshot snapshot = pool.snapshot();
        Proposal proposal = kind == RpcKind.WORK ? proposer.propose(session, snapshot, settling(), access) : null;
        CompletableFuture<Lookup> call = proposal == null
                ? guard.onRequestPath(() -> store.find(session))
                        .thenApply(found -> found.map(b -> new Lookup(b, false)).orElse(null))
                : guard.onRequestPath(() -> store.findOrBind(session, proposal.replica().boundAs()));
        return call.handle((lookup, error) -> {
            if (error != null) {
                return done(storeUnanswered(session, kind, access, error));
            }
            if (lookup == null) {
                if (kind == RpcKind.WORK) {
                    return done(proposer.nothingToPropose(snapshot, access));
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
            Decision d = routeKnown(session, b, pool.snapshot(), access);
            if (d instanceof Decision.Route route) {
                upkeep.afterRoute(session, entry, route.replica().boundAs(), kind);
                return done(d);
            }
            // A replica id this router does not know may be a pool that is behind: look again. A known id with
            // another driver is final.
            return b.lost() || pool.snapshot().get(b.replicaId()) != null ? done(d)
                    : resolveUnknownReplica(session, b, kind, access);
        }).thenCompose(f -> f);
    }

    /**
     * The store did not answer a request-path call (after one retry). While the store is believed healthy
     * this is a blip: the session may well exist, and guessing could move it, so the client is asked to
     * retry (Spark's client retries UNAVAILABLE on its own). Once repeated failures open the breaker the
     * store is down, not blipping: then rendezvous placement keeps new sessions flowing, identically on
     * every router. A clean-up call has nothing to fall back to: it must not bind.
     */
    private Decision storeUnanswered(String session, RpcKind kind, Access access, Throwable error) {
        if (kind == RpcKind.WORK && guard.breakerOpen()) {
            return placeWithoutStore(session, access);
        }
        return GuardedStore.unanswered(error);
    }

    /**
     * Store unreachable: rendezvous over the ready replicas of the first allowed group that has any, held locally
     * and offered to the store later. Caps are not applied: counts differ a little between routers, and without
     * the store only a choice every router computes alike keeps a session in one place.
     */
    private Decision placeWithoutStore(String session, Access access) {
        PoolSnapshot snapshot = pool.snapshot();
        Proposal proposal = proposer.propose(session, snapshot, true, access);
        if (proposal == null) {
            return proposer.nothingToPropose(snapshot, access);
        }
        writeBacks.placedWithoutStore(session, proposal.replica());
        return new Decision.Route(proposal.replica(), Decision.Outcome.FALLBACK);
    }

    /**
     * True while routers must place new sessions alike without trusting the store's view: shortly after the
     * store failed (routers notice an outage, and its end, at slightly different moments), and while sessions
     * lost with the store's data are being written back.
     */
    private boolean settling() {
        return guard.recentlyFailed() || writeBacks.restoring();
    }

    /**
     * Where a known session's requests go: its replica, if that replica's driver is still the one it was bound to
     * and its group is one the request may use. A session id alone never reaches another group's driver.
     */
    private Decision routeKnown(String session, Binding binding, PoolSnapshot snapshot, Access access) {
        if (binding.lost()) {
            return Rejections.sessionLost(session, binding.replicaId());
        }
        Replica r = snapshot.get(binding.replicaId());
        if (r == null) {
            // Lost only if this router saw the replica go. One it never knew may not be listed yet (the instance
            // store restarted empty and its publisher has not renewed): saying "lost" then would make the user
            // throw away a session that is alive. The routers that saw it go write the tombstone.
            return pool.sawLeave(binding.replicaId()) ? Rejections.sessionLost(session, binding.replicaId())
                    : Rejections.replicaNotListed(session, binding.replicaId());
        }
        if (binding.instance() != null && !binding.instance().equals(r.identity())) {
            // Same id, another driver (re-registered at a new address, or restarted in place): the session's state
            // was in the old one. Checked on every request, whether or not the tombstones are written yet.
            return Rejections.sessionLost(session, binding.replicaId());
        }
        if (!access.allows(r)) {
            return GroupRejections.otherGroup(session, r.group(), access.requestGroup());
        }
        return new Decision.Route(r, Decision.Outcome.KNOWN);
    }

    private CompletableFuture<Decision> resolveUnknownReplica(String session, Binding binding, RpcKind kind,
                                                              Access access) {
        return poolRefresher.refresh().thenApply(snapshot -> {
            Decision d = routeKnown(session, binding, snapshot, access);
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
    public Decision dryRun(Request request) {
        Optional<String> method = SparkRpc.method(request.path());
        if (method.isEmpty()) {
            return Rejections.notSparkConnect(request.path());
        }
        if (request.sessionId() == null) {
            return Rejections.missingSessionId();
        }
        if (!SessionIds.isValid(request.sessionId())) {
            return Rejections.malformedSessionId(request.sessionId());
        }
        ReplicaGroups.Resolution resolution = groups.resolve(request.group(), request.groupCount());
        if (resolution instanceof ReplicaGroups.Refused refused) {
            return refused.reject();
        }
        Access access = ((ReplicaGroups.Granted) resolution).access();
        PoolSnapshot snapshot = pool.snapshot();
        Proposal proposal = proposer.propose(SessionIds.canonical(request.sessionId()), snapshot, settling(), access);
        return proposal == null ? proposer.nothingToPropose(snapshot, access)
                : new Decision.Route(proposal.replica(), proposal.outcome());
    }

    private static CompletableFuture<Decision> done(Decision d) {
        return CompletableFuture.completedFuture(d);
    }
}
