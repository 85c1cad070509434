package io.scrouter.extproc.routing;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.scrouter.extproc.pool.PoolChange;
import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.PoolSnapshot;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.Lookup;
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
import java.util.Map;
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
 *   <li>Miss: choose where the session would go if new, then one atomic find-or-bind call returns the
 *       existing binding or creates that one; whichever binding is in the store is the one used.</li>
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
    /** When the store last failed a call; placement settles on rendezvous for a while after it. */
    private volatile long storeTroubleAtMillis = Long.MIN_VALUE;
    /** Sessions routed by rendezvous that the store has not recorded yet. */
    private final java.util.Set<String> unconfirmed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private static final int MAX_CLAIMS_IN_FLIGHT = 16;
    /** Sessions to write back after the store lost its data. */
    private final java.util.concurrent.ConcurrentLinkedQueue<String> rewrite =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile String knownEpoch;
    private final java.util.function.BiConsumer<String, String> peerFeed = this::learnPeerBinding;
    /** Peer bindings to replicas not in the pool yet, oldest first, bounded: see {@link #learnPeerBinding}. */
    private final Map<String, Binding> bindingsToUnknownReplicas = new java.util.LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Binding> eldest) {
            return size() > MAX_BINDINGS_TO_UNKNOWN_REPLICAS;
        }
    };
    private static final int MAX_BINDINGS_TO_UNKNOWN_REPLICAS = 10_000;
    /** Drivers whose sessions must still be marked lost in the store ({@code <id>@<identity>}). */
    private final java.util.Set<String> pendingEvictions = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.Set<String> evictionsInFlight = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicInteger claimsInFlight = new java.util.concurrent.atomic.AtomicInteger();

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
        // The binding feed is first read on the first reconcile, after the pool has been read: entries for
        // replicas the pool does not know yet would be dropped while the feed's position moved past them.
        pool.onChange(this::onPoolChange);
    }


    /**
     * Another router bound a session: remember it, unless this router already holds a binding for it. Only
     * well-formed ids are taken. A binding to a replica this router's pool does not have yet (the other router
     * saw it join first) is kept aside and taken once the pool has it, rather than dropped while the feed moves
     * past it.
     */
    private void learnPeerBinding(String sessionId, String replica) {
        if (!SessionIds.isValid(sessionId)) {
            return;
        }
        Binding binding = Binding.to(replica);
        String session = SessionIds.canonical(sessionId);
        if (pool.snapshot().get(binding.replicaId()) == null) {
            synchronized (bindingsToUnknownReplicas) {
                bindingsToUnknownReplicas.put(session, binding);
            }
            return;
        }
        nearCache.asMap().putIfAbsent(session, new CachedBinding(binding, true, clock.getAsLong()));
    }

    /** Takes the kept-aside peer bindings whose replica the pool now has. */
    private void learnBindingsToNewReplicas() {
        synchronized (bindingsToUnknownReplicas) {
            bindingsToUnknownReplicas.entrySet().removeIf(e -> {
                if (pool.snapshot().get(e.getValue().replicaId()) == null) {
                    return false;
                }
                nearCache.asMap().putIfAbsent(e.getKey(), new CachedBinding(e.getValue(), true, clock.getAsLong()));
                return true;
            });
        }
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
        Rpc rpc = Rpc.of(method.get());

        CachedBinding cached = nearCache.getIfPresent(session);
        if (cached != null && cached.expired(clock.getAsLong())) {
            // A released binding past its grace: the store's key has expired too.
            nearCache.asMap().remove(session, cached);
            cached = null;
        }
        if (cached != null) {
            Decision d = routeKnown(session, cached.binding, pool.snapshot());
            if (d instanceof Decision.Route route) {
                afterRoute(session, cached, route, rpc);
                return done(d);
            }
            if (cached.binding.routable() && pool.snapshot().get(cached.binding.replicaId()) == null) {
                // Bound to a replica this router does not know: maybe our pool is behind. Look again.
                return resolveUnknownReplica(session, cached.binding, rpc);
            }
            return done(d);
        }
        return lookUp(session, rpc);
    }

    /** What a request does to its session's binding besides being routed by it. */
    private enum Rpc {
        /** Work: binds a new session, revives a released one, keeps the session alive. */
        WORK,
        /** {@code ReleaseSession}: routed, then the binding is released. */
        RELEASE_SESSION,
        /** Other clean-up ({@code ReleaseExecute}): routed by an existing binding only. */
        CLEANUP;

        static Rpc of(String method) {
            if (SparkRpc.RELEASE_SESSION.equals(method)) {
                return RELEASE_SESSION;
            }
            return SparkRpc.isCleanup(method) ? CLEANUP : WORK;
        }
    }

    private CompletableFuture<Decision> lookUp(String session, Rpc rpc) {
        long now = clock.getAsLong();
        if (!storeHealth.shouldTry(now)) {
            return done(rpc == Rpc.WORK ? fallback(session) : Rejections.storeBlip());
        }
        // Choose where the session would go if it is new before asking the store, so that one atomic call
        // both reads an existing binding and creates a missing one: a single round trip either way. The
        // choice is cheap and simply dropped when the session turns out to be bound already. Clean-up calls
        // never bind: a late ReleaseExecute of a session whose binding is gone must not create one.
        PoolSnapshot snapshot = pool.snapshot();
        Proposal proposal = rpc == Rpc.WORK ? propose(session, snapshot) : null;
        CompletableFuture<Lookup> call = proposal == null
                ? withOneRetry(() -> store.find(session)).thenApply(found -> found.map(b -> new Lookup(b, false))
                        .orElse(null))
                : withOneRetry(() -> store.findOrBind(session, proposal.replica().boundAs()));
        return call.handle((lookup, error) -> {
            if (error != null) {
                return done(rpc == Rpc.WORK ? storeUnanswered(session, error) : storeUnansweredForCleanup(error));
            }
            storeHealth.success();
            if (lookup == null) {
                if (rpc == Rpc.WORK) {
                    return done(Rejections.noReadyReplica(snapshot.size()));
                }
                // Just after an outage or a data loss the store may not hold a live session yet (its router is
                // writing it back): ask for a retry then, and say it is gone only when the store is settled.
                return done(settling() ? Rejections.storeBlip() : Rejections.notBound(session));
            }
            CachedBinding entry = cache(session, lookup.binding());
            if (lookup.created()) {
                String id = proposal.replica().id();
                board.notePlacement(id);
                counts.noteBound(id);
                if (proposal.outcome() != Decision.Outcome.FALLBACK) {
                    noteDegraded(proposal.outcome() == Decision.Outcome.PLACED_DEGRADED);
                }
                Decision.Route route = new Decision.Route(proposal.replica(), proposal.outcome());
                afterRoute(session, entry, route, rpc);
                return done(route);
            }
            Binding b = lookup.binding();
            Decision d = routeKnown(session, b, pool.snapshot());
            if (d instanceof Decision.Route route) {
                afterRoute(session, entry, route, rpc);
                return done(d);
            }
            // A replica id this router does not know may be a pool that is behind: look again. A known id with
            // another driver is final.
            return b.lost() || pool.snapshot().get(b.replicaId()) != null ? done(d)
                    : resolveUnknownReplica(session, b, rpc);
        }).thenCompose(f -> f);
    }

    /** Caches what the store holds; a released binding expires here when it does in the store (at the latest). */
    private CachedBinding cache(String session, Binding binding) {
        long now = clock.getAsLong();
        CachedBinding entry = binding.released()
                ? new CachedBinding(binding, true, now, now + settings.releaseGraceMillis())
                : new CachedBinding(binding, true, now);
        nearCache.put(session, entry);
        return entry;
    }

    /**
     * A clean-up call the store could not answer: there is nothing to fall back to, because it must not
     * bind. Its session is not one this router knows, so the call gets the retryable blip answer.
     */
    private Decision storeUnansweredForCleanup(Throwable error) {
        storeFailed(error);
        return Rejections.storeBlip();
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
        Proposal proposal = propose(SessionIds.canonical(sessionId), snapshot);
        return proposal == null ? Rejections.noReadyReplica(snapshot.size())
                : new Decision.Route(proposal.replica(), proposal.outcome());
    }

    /**
     * The replicas rendezvous hashing may choose from: the ready ones whose last probe did not fail (a replica
     * that died gets no new session, whatever the store's health), or all ready ones when every probe fails (the
     * metrics side is down, not Spark). Every router's probes fail for a dead replica, so routers still agree;
     * they can differ for one probe interval around a failure, for new sessions only.
     */
    private List<Replica> answeringProbes(List<Replica> ready) {
        List<Replica> answering = new ArrayList<>(ready.size());
        for (Replica r : ready) {
            if (board.get(r.id()).consecutiveFailures() == 0) {
                answering.add(r);
            }
        }
        return answering.isEmpty() ? ready : answering;
    }

    /** Where a new session would be placed, and how that choice was made. */
    private record Proposal(Replica replica, Decision.Outcome outcome) {
    }

    /**
     * The replica a new session would get: by the placement policy normally, by rendezvous just after a
     * store outage (see {@link #settling()}); null when no replica takes new sessions.
     */
    private Proposal propose(String session, PoolSnapshot snapshot) {
        if (snapshot.ready().isEmpty()) {
            return null;
        }
        if (settling()) {
            return new Proposal(Rendezvous.pick(session, answeringProbes(snapshot.ready())),
                    Decision.Outcome.FALLBACK);
        }
        Optional<Placement> placement = placer.place(candidates(snapshot), ThreadLocalRandom.current());
        if (placement.isEmpty()) {
            return null;
        }
        Replica r = snapshot.get(placement.get().replicaId());
        return new Proposal(r, placement.get().degraded() ? Decision.Outcome.PLACED_DEGRADED
                : Decision.Outcome.PLACED);
    }

    /**
     * The store did not answer a request-path call (after one retry). While the store is believed healthy
     * this is a blip: the session may well exist, and guessing could move it, so the client is asked to
     * retry (Spark's client retries UNAVAILABLE on its own). Once repeated failures open the breaker the
     * store is down, not blipping: then rendezvous placement keeps new sessions flowing, identically on
     * every router.
     */
    private Decision storeUnanswered(String session, Throwable error) {
        storeFailed(error);
        return storeHealth.isOpen() ? fallback(session) : Rejections.storeBlip();
    }

    /**
     * Runs a store call under the store deadline, and once more if the first attempt failed fast (a dropped
     * connection, a failover in progress). A timed-out attempt is not repeated: Redis is slow or hung, and a
     * second wait would only double the decision's latency.
     */
    private <T> CompletableFuture<T> withOneRetry(java.util.function.Supplier<CompletableFuture<T>> call) {
        return withDeadline(call.get()).exceptionallyCompose(first -> {
            storeHealth.failure(clock.getAsLong());
            storeTroubleAtMillis = clock.getAsLong();
            return isTimeout(first) ? CompletableFuture.failedFuture(first) : withDeadline(call.get());
        });
    }

    private static boolean isTimeout(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof java.util.concurrent.TimeoutException
                    || t.getClass().getSimpleName().contains("Timeout")) {
                return true;
            }
        }
        return false;
    }

    /** True shortly after the store failed: the window in which routers may disagree about its health. */
    private boolean settling() {
        if (!rewrite.isEmpty()) {
            return true;
        }
        long trouble = storeTroubleAtMillis;
        return trouble != Long.MIN_VALUE && clock.getAsLong() - trouble < settings.settleMillis();
    }

    /**
     * Writes every placement made while the store was unreachable back to it, now rather than on each
     * session's next request, so routers converge quickly after an outage. Called on each pool poll.
     */
    public void reconcile() {
        // Catch up on other routers' new bindings, including any announced while this one was cut off.
        learnBindingsToNewReplicas();
        store.catchUpOnBindings(peerFeed);
        if (storeHealth.isOpen()) {
            return;
        }
        evictPending();
        checkForDataLoss();
        if (!unconfirmed.isEmpty() || !rewrite.isEmpty()) {
            pumpWriteBacks();
        }
    }

    /**
     * A Redis that restarted without persistence (or failed over to a replica that missed writes) comes back
     * without the bindings. The store's epoch marker tells: a changed epoch means its data was lost, and this
     * router then writes every live session it holds back, paced, placing new sessions by rendezvous until it
     * is done so that routers still agree on sessions only some of them remember.
     */
    private void checkForDataLoss() {
        store.epoch().orTimeout(settings.storeTimeoutMillis() * 4, TimeUnit.MILLISECONDS).whenComplete((epoch, error) -> {
            if (error != null || epoch == null) {
                return;
            }
            String before = knownEpoch;
            knownEpoch = epoch;
            if (before == null || before.equals(epoch)) {
                return;
            }
            storeTroubleAtMillis = clock.getAsLong();
            int queued = 0;
            for (Map.Entry<String, CachedBinding> e : nearCache.asMap().entrySet()) {
                if (e.getValue().confirmed && !e.getValue().binding.lost()) {
                    rewrite.add(e.getKey());
                    queued++;
                }
            }
            LOG.warn("the session store lost its data (epoch {} -> {}); writing back the {} live sessions this router "
                    + "holds, and placing new sessions by rendezvous until that is done", before, epoch, queued);
            pumpWriteBacks();
        });
    }

    /**
     * Writes back, at most {@link #MAX_CLAIMS_IN_FLIGHT} at a time, first placements made while the store was
     * unreachable, then sessions lost with the store's data; each call that finishes starts the next. A
     * 30-second outage under load leaves thousands of them: written all at once they would starve the request
     * path of Redis connections and time it out, which would look like a new outage.
     */
    private void pumpWriteBacks() {
        long now = clock.getAsLong();
        for (java.util.Iterator<String> it = unconfirmed.iterator();
             it.hasNext() && claimsInFlight.get() < MAX_CLAIMS_IN_FLIGHT; ) {
            String session = it.next();
            CachedBinding entry = nearCache.getIfPresent(session);
            if (entry == null || entry.confirmed) {
                it.remove();
            } else if (entry.claimPush(now, settings.retryUnconfirmedMillis())) {
                track(claim(session, entry.binding.bound()));
            }
        }
        while (claimsInFlight.get() < MAX_CLAIMS_IN_FLIGHT) {
            String session = rewrite.poll();
            if (session == null) {
                break;
            }
            CachedBinding entry = nearCache.getIfPresent(session);
            if (entry != null && entry.confirmed && !entry.binding.lost()) {
                track(confirm(session, entry.binding.bound()));
            }
        }
    }

    private void track(CompletableFuture<?> writeBack) {
        claimsInFlight.incrementAndGet();
        writeBack.whenComplete((x, e) -> {
            claimsInFlight.decrementAndGet();
            if (e == null && !storeHealth.isOpen()) {
                pumpWriteBacks();
            }
        });
    }

    private List<Candidate> candidates(PoolSnapshot snapshot) {
        long now = clock.getAsLong();
        List<Candidate> out = new ArrayList<>(snapshot.ready().size());
        for (Replica r : snapshot.ready()) {
            out.add(candidate(r, now));
        }
        return out;
    }

    /** A replica as the placement policy sees it: fresh only with a metrics endpoint and a recent sample. */
    private Candidate candidate(Replica r, long now) {
        ReplicaLoad load = board.get(r.id());
        boolean fresh = r.metricsUrl() != null && load.isFresh(now, board.staleAfterMillis());
        return load.candidate(r.id(), fresh, counts.get(r.id()), counts.recent(r.id()));
    }

    /** Store unreachable: rendezvous over ready replicas, remembered locally and offered to the store later. */
    private Decision fallback(String session) {
        List<Replica> ready = pool.snapshot().ready();
        if (ready.isEmpty()) {
            return Rejections.noReadyReplica(pool.snapshot().size());
        }
        Replica r = Rendezvous.pick(session, answeringProbes(ready));
        // Pushed "long ago", so the first hit after retryUnconfirmed offers it to the store.
        nearCache.put(session, new CachedBinding(Binding.to(r.boundAs()), false, clock.getAsLong()
                - settings.refreshEveryMillis() + settings.retryUnconfirmedMillis()));
        unconfirmed.add(session);
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
        if (binding.instance() != null && !binding.instance().equals(r.identity())) {
            // Same id, another driver (re-registered at a new address, or restarted in place): the session's state
            // was in the old one. Checked on every request, whether or not the tombstones are written yet.
            return Rejections.sessionLost(session, binding.replicaId());
        }
        return new Decision.Route(r, Decision.Outcome.KNOWN);
    }

    private CompletableFuture<Decision> resolveUnknownReplica(String session, Binding binding, Rpc rpc) {
        return poolRefresher.refresh().thenApply(snapshot -> {
            Decision d = routeKnown(session, binding, snapshot);
            if (d instanceof Decision.Route route) {
                CachedBinding entry = nearCache.getIfPresent(session);
                if (entry != null) {
                    afterRoute(session, entry, route, rpc);
                }
            }
            return d;
        });
    }

    private void afterRoute(String session, CachedBinding entry, Decision.Route route, Rpc rpc) {
        String replica = route.replica().boundAs();
        switch (rpc) {
            case RELEASE_SESSION -> release(session, entry, replica);
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
    private void release(String session, CachedBinding entry, String replica) {
        if (entry.binding.state() != Binding.State.LIVE) {
            return;
        }
        long now = clock.getAsLong();
        nearCache.put(session, new CachedBinding(entry.binding.as(Binding.State.RELEASED), entry.confirmed, now,
                now + settings.releaseGraceMillis()));
        withDeadline(store.release(session, entry.binding.bound())).exceptionally(e -> {
            backgroundFailed("release", session, e);
            return null;
        });
    }

    /** A released session is used again: it is live, counted and kept alive as before its release. */
    private void revive(String session, String replica) {
        nearCache.put(session, new CachedBinding(Binding.to(replica), true, clock.getAsLong()));
        withDeadline(store.touch(session, replica)).whenComplete((revived, error) -> {
            if (error != null) {
                backgroundFailed("revive", session, error);
            } else if (!revived) {
                // The released key expired meanwhile: bind the session again where it lives.
                confirm(session, replica);
            }
        });
    }

    private void keepAlive(String session, CachedBinding entry, String replica) {
        long now = clock.getAsLong();
        if (!entry.claimPush(now, settings.refreshEveryMillis())) {
            return;
        }
        if (!entry.confirmed) {
            claim(session, replica);
            return;
        }
        withDeadline(store.touch(session, replica)).whenComplete((stillBound, error) -> {
            if (error != null) {
                backgroundFailed("idle-timer push", session, error);
            } else {
                storeHealth.success();
                if (!stillBound) {
                    // The store lost the binding (flushed, failed over, expired early): write ours back.
                    confirm(session, replica);
                }
            }
        });
    }

    /** Offers a binding the store lost; adopts the store's if another router's differs. */
    private CompletableFuture<Binding> confirm(String session, String replica) {
        return withDeadline(store.bindIfAbsent(session, replica)).whenComplete((winner, error) -> {
            if (error != null) {
                backgroundFailed("write-back", session, error);
                return;
            }
            storeHealth.success();
            nearCache.put(session, new CachedBinding(winner, true, clock.getAsLong()));
            if (winner.lost()) {
                LOG.debug("session={} is lost with replica {}", session, winner.replicaId());
            } else if (!winner.equals(Binding.to(replica))) {
                LOG.atWarn().setMessage("session bound elsewhere in the store than this router had it; following "
                        + "the store").addKeyValue("session", session).addKeyValue("replica", winner.replicaId())
                        .addKeyValue("previousReplica", replica).log();
            }
        });
    }

    /**
     * Writes a placement made while the store was unreachable, replacing what the store holds.
     *
     * <p>Why replace rather than adopt: the usual conflicting value is this router's own {@code SET NX} that
     * timed out while Redis hung and was executed when it resumed, for a session that was then routed by
     * rendezvous. The session's requests went to the rendezvous replica, and every router computed that
     * same replica, so they all write the same value and converge on where the session really lives. A
     * tombstone still wins: a replica that left the pool is gone whatever was routed.
     */
    private CompletableFuture<Binding> claim(String session, String replica) {
        return withDeadline(store.claim(session, replica)).whenComplete((held, error) -> {
            if (error != null) {
                backgroundFailed("claim", session, error);
                return;
            }
            storeHealth.success();
            unconfirmed.remove(session);
            nearCache.put(session, new CachedBinding(held, true, clock.getAsLong()));
        });
    }

    /**
     * A background store call (idle-timer push, write-back) failed. It is retried on a later request or poll,
     * and it does not count against the store's health: only request-path calls decide whether the store is
     * down, so a burst of background work can never make the router believe in an outage of its own making.
     */
    private void backgroundFailed(String what, String session, Throwable error) {
        LOG.debug("session={} background {} failed: {}", session, what, error.toString());
    }

    /**
     * A replica left the pool, or its identity changed (same id, another driver): its sessions are gone. The
     * near-cache drops them at once, and the store marks them lost so that every router answers them with the
     * clear error. Marking is retried on every reconcile until the store has done it: a failed attempt must not
     * leave bindings that a later driver under the same id would silently pick up (the request path checks the
     * identity too, so it never routes them meanwhile).
     */
    private void onPoolChange(PoolChange change) {
        if (!change.joined().isEmpty()) {
            learnBindingsToNewReplicas();
        }
        if (change.left().isEmpty()) {
            return;
        }
        for (String id : change.left()) {
            Replica gone = change.before().get(id);
            if (gone != null) {
                pendingEvictions.add(gone.boundAs());
            }
        }
        nearCache.asMap().values().removeIf(e -> !e.binding.lost() && change.left().contains(e.binding.replicaId())
                && !stillServes(change.after(), e.binding));
        evictPending();
    }

    /** True if the pool still has the driver this binding names (a new driver under the id does not count). */
    private static boolean stillServes(PoolSnapshot snapshot, Binding binding) {
        Replica r = snapshot.get(binding.replicaId());
        return r != null && binding.instance() != null && binding.instance().equals(r.identity());
    }

    private void evictPending() {
        for (String replica : pendingEvictions) {
            if (!evictionsInFlight.add(replica)) {
                continue;
            }
            withDeadline(store.evictReplica(replica), settings.storeTimeoutMillis() * 20).whenComplete((n, error) -> {
                evictionsInFlight.remove(replica);
                String id = Binding.replicaIdOf(replica);
                if (error != null) {
                    LOG.atWarn().setMessage("a replica's driver is gone; marking its sessions lost failed, retrying "
                            + "at the next pool poll").addKeyValue("replica", id)
                            .addKeyValue("error", error.toString()).log();
                    return;
                }
                pendingEvictions.remove(replica);
                if (n > 0) {
                    LOG.atInfo().setMessage("a replica's driver is gone; its sessions now get a 'session lost' error")
                            .addKeyValue("replica", id).addKeyValue("sessions", n).log();
                }
            });
        }
    }

    private void storeFailed(Throwable error) {
        storeTroubleAtMillis = clock.getAsLong();
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
            out.add(candidate(r, now));
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
        // Quietly: looking at a session (the admin view, a test) must not keep it alive in the cache.
        return Optional.ofNullable(nearCache.policy().getIfPresentQuietly(SessionIds.canonical(sessionId)))
                .map(e -> e.binding);
    }

    private <T> CompletableFuture<T> withDeadline(CompletableFuture<T> call) {
        return withDeadline(call, settings.storeTimeoutMillis());
    }

    private static <T> CompletableFuture<T> withDeadline(CompletableFuture<T> call, long millis) {
        return call.orTimeout(millis, TimeUnit.MILLISECONDS);
    }

    private static CompletableFuture<Decision> done(Decision d) {
        return CompletableFuture.completedFuture(d);
    }
}
