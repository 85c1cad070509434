package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Puts back into the store what this router knows and the store does not: placements made while the store was
 * unreachable ("unconfirmed"), and live sessions after the store lost its data. Paced: at most
 * {@link #MAX_IN_FLIGHT} calls at a time, each finished call starting the next. A 30-second outage under load
 * leaves thousands of them: written all at once they would starve the request path of Redis connections and
 * time it out, which would look like a new outage.
 */
final class WriteBacks {

    private static final Logger LOG = LoggerFactory.getLogger(WriteBacks.class);
    static final int MAX_IN_FLIGHT = 16;

    private final SessionStore store;
    private final GuardedStore guard;
    private final NearCache nearCache;
    private final TimeSource time;
    private final RouterSettings settings;
    /** Sessions placed by rendezvous that the store has not recorded yet. */
    private final Set<String> unconfirmed = ConcurrentHashMap.newKeySet();
    /** Sessions to write back after the store lost its data. */
    private final Queue<String> lostWithTheStore = new ConcurrentLinkedQueue<>();
    /**
     * Sessions whose write-back failed (the store not answering yet, or a connection still held off after the
     * outage), offered again at the next poll: taken out of the queue for good, they would be forgotten by the store
     * while this router still routes them. Not retried at once, which on a store failing fast would spin.
     */
    private final Queue<String> retryAtNextPoll = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The store's data-set marker as last read; null before the first read. */
    private final AtomicReference<String> knownEpoch = new AtomicReference<>();

    WriteBacks(SessionStore store, GuardedStore guard, NearCache nearCache, TimeSource time, RouterSettings settings) {
        this.store = store;
        this.guard = guard;
        this.nearCache = nearCache;
        this.time = time;
        this.settings = settings;
    }

    /**
     * A session placed on {@code replica} without the store: held as unconfirmed, and marked pushed "long ago" so
     * that the first request after {@code retryUnconfirmed} (or the next pump) offers it to the store.
     */
    void placedWithoutStore(String session, Replica replica) {
        nearCache.put(session, new CachedBinding(Binding.to(replica.boundAs()), false, time.millis()
                - settings.refreshEveryMillis() + settings.retryUnconfirmedMillis()));
        unconfirmed.add(session);
    }

    /** True while sessions lost with the store's data are still being written back. */
    boolean restoring() {
        return !lostWithTheStore.isEmpty() || !retryAtNextPoll.isEmpty();
    }

    /**
     * Called on every pool poll. While the breaker is open, only a trial call closes it, and request-path trials
     * come only with requests for sessions this router does not know: a quiet router would keep it open for
     * ever, and its outage placements would never reach the store. So the poll spends the trial on writing one
     * of them back; its success closes the breaker, and the rest follow.
     */
    void onPoll() {
        for (String session; (session = retryAtNextPoll.poll()) != null; ) {
            lostWithTheStore.add(session);
        }
        if (guard.breakerOpen()) {
            offerOneAsTrial();
            return;
        }
        checkForDataLoss();
        if (!unconfirmed.isEmpty() || !lostWithTheStore.isEmpty()) {
            pump();
        }
    }

    private void offerOneAsTrial() {
        long now = time.millis();
        for (String session : unconfirmed) {
            CachedBinding entry = nearCache.peek(session);
            if (entry == null || entry.confirmed) {
                unconfirmed.remove(session);
                continue;
            }
            if (guard.mayCall() && nearCache.takeTurnToPush(session, now, settings.retryUnconfirmedMillis())) {
                track(claim(session, entry.binding.bound()));
            }
            return;
        }
    }

    /**
     * A Redis that restarted without persistence (or failed over to a replica that missed writes) comes back
     * without the bindings. The store's epoch marker tells: a changed epoch means its data was lost, and this
     * router then writes every live session it holds back, placing new sessions by rendezvous until it is done
     * so that routers still agree on sessions only some of them remember.
     */
    private void checkForDataLoss() {
        guard.inBackground(store.epoch(), settings.storeTimeoutMillis() * 4).whenComplete((epoch, error) -> {
            if (error != null || epoch == null) {
                return;
            }
            String before = knownEpoch.getAndSet(epoch);
            if (before == null || before.equals(epoch)) {
                return;
            }
            guard.startSettling();
            int[] queued = {0};
            nearCache.forEachLiveConfirmed((session, entry) -> {
                lostWithTheStore.add(session);
                queued[0]++;
            });
            LOG.atWarn().setMessage("the session store lost its data; writing back the live sessions this router "
                    + "holds, and placing new sessions by rendezvous until that is done")
                    .addKeyValue("epochBefore", before).addKeyValue("epoch", epoch)
                    .addKeyValue("sessions", queued[0]).log();
            pump();
        });
    }

    /** Starts write-backs up to the in-flight bound: unconfirmed placements first, then sessions lost with the data. */
    private void pump() {
        long now = time.millis();
        for (Iterator<String> it = unconfirmed.iterator(); it.hasNext() && inFlight.get() < MAX_IN_FLIGHT; ) {
            String session = it.next();
            CachedBinding entry = nearCache.peek(session);
            if (entry == null || entry.confirmed) {
                it.remove();
            } else if (nearCache.takeTurnToPush(session, now, settings.retryUnconfirmedMillis())) {
                track(claim(session, entry.binding.bound()));
            }
        }
        while (inFlight.get() < MAX_IN_FLIGHT) {
            String session = lostWithTheStore.poll();
            if (session == null) {
                break;
            }
            CachedBinding entry = nearCache.peek(session);
            if (entry != null && entry.confirmed && !entry.binding.lost()) {
                track(confirm(session, entry.binding.bound()).whenComplete((written, error) -> {
                    if (error != null) {
                        retryAtNextPoll.add(session);
                    }
                }));
            }
        }
    }

    private void track(CompletableFuture<?> writeBack) {
        inFlight.incrementAndGet();
        writeBack.whenComplete((x, e) -> {
            inFlight.decrementAndGet();
            if (e == null && !guard.breakerOpen()) {
                pump();
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
    CompletableFuture<Binding> claim(String session, String replica) {
        return guard.inBackground(store.claim(session, replica)).whenComplete((held, error) -> {
            if (error != null) {
                backgroundFailed("claim", session, error);
                return;
            }
            unconfirmed.remove(session);
            nearCache.put(session, new CachedBinding(held, true, time.millis()));
        });
    }

    /** Offers a binding the store lost; adopts the store's if another router's differs. */
    CompletableFuture<Binding> confirm(String session, String replica) {
        return guard.inBackground(store.bindIfAbsent(session, replica)).whenComplete((winner, error) -> {
            if (error != null) {
                backgroundFailed("write-back", session, error);
                return;
            }
            nearCache.put(session, new CachedBinding(winner, true, time.millis()));
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
     * A background store call failed. It is retried on a later request or poll, and it does not count against
     * the store's health (see {@link GuardedStore}).
     */
    static void backgroundFailed(String what, String session, Throwable error) {
        LOG.debug("session={} background {} failed: {}", session, what, error.toString());
    }
}
