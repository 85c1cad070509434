package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolChange;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Drivers that left the pool (the replica is gone, or its identity changed: same id, another driver), whose
 * sessions the store must mark lost so that every router answers them with the clear error. Marking is retried
 * on every poll until the store has done it: a failed attempt must not leave bindings that a later driver under
 * the same id would silently pick up (the request path checks the identity too, so it never routes them
 * meanwhile).
 */
final class LostDrivers {

    private static final Logger LOG = LoggerFactory.getLogger(LostDrivers.class);
    /** Marking touches every session of the driver: far more than one request-path call's work. */
    private static final int DEADLINE_IN_STORE_TIMEOUTS = 20;

    private final SessionStore store;
    private final GuardedStore guard;
    private final long deadlineMillis;
    /**
     * Drivers still to be marked, as bound ({@code <id>@<identity>}), with the passes still owed. Each driver is
     * marked twice, the second time on a later poll: a session bound just before its driver left may reach the
     * replica's index after the first pass read it (the index write follows the binding without being awaited),
     * and would otherwise stay live, and counted, under an id that may return.
     */
    private final Map<String, Integer> pending = new ConcurrentHashMap<>();
    private static final int PASSES = 2;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

    LostDrivers(SessionStore store, GuardedStore guard, RouterSettings settings) {
        this.store = store;
        this.guard = guard;
        this.deadlineMillis = settings.storeTimeoutMillis() * DEADLINE_IN_STORE_TIMEOUTS;
    }

    /** Notes the drivers that left with this change and starts marking their sessions. */
    void onPoolChange(PoolChange change) {
        if (change.left().isEmpty()) {
            return;
        }
        for (String id : change.left()) {
            Replica gone = change.before().get(id);
            if (gone != null) {
                pending.put(gone.boundAs(), PASSES);
            }
        }
        markPending();
    }

    /** Starts marking every pending driver that is not being marked already. */
    void markPending() {
        for (String driver : pending.keySet()) {
            if (!inFlight.add(driver)) {
                continue;
            }
            guard.inBackground(store.evictReplica(driver), deadlineMillis).whenComplete((n, error) -> {
                inFlight.remove(driver);
                String id = Binding.replicaIdOf(driver);
                if (error != null) {
                    LOG.atWarn().setMessage("a replica's driver is gone; marking its sessions lost failed, retrying "
                            + "at the next pool poll").addKeyValue("replica", id)
                            .addKeyValue("error", error.toString()).log();
                    return;
                }
                pending.computeIfPresent(driver, (d, left) -> left > 1 ? left - 1 : null);
                if (n > 0) {
                    LOG.atInfo().setMessage("a replica's driver is gone; its sessions now get a 'session lost' error")
                            .addKeyValue("replica", id).addKeyValue("sessions", n).log();
                }
            });
        }
    }
}
