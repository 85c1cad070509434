package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.extproc.session.BindingFeed;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.policy.Placer;

import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The routing side of one router, assembled: the decision path ({@link #router}), the poll-time work
 * ({@link #reconciler}), and the parts the admin view and metrics read.
 */
public record Routing(SessionRouter router, Reconciler reconciler, NearCache nearCache,
                      PlacementProposer placement, GuardedStore store) {

    /** How many write-backs run at a time after an outage or a data loss (see {@link WriteBacks}). */
    public static final int WRITE_BACKS_IN_FLIGHT = WriteBacks.MAX_IN_FLIGHT;

    /**
     * What placement reads: the policy, the replicas' load, their session counts, the policy's randomness, and
     * the replica groups each request may use.
     */
    public record PlacementInputs(Placer placer, LoadBoard board, SessionCounts counts,
                                  Supplier<RandomGenerator> random, ReplicaGroups groups) {
    }

    /**
     * Wires the parts together and subscribes to the pool's changes.
     *
     * @param pool      the replicas in force
     * @param refresher re-reads the pool when a session names a replica this router does not know yet
     * @param store     the shared session store
     * @param feed      the other routers' new bindings
     */
    public static Routing assemble(ServerPool pool, PoolRefresher refresher, SessionStore store, BindingFeed feed,
                                   PlacementInputs placement, RouterSettings settings, TimeSource time) {
        GuardedStore guard = new GuardedStore(new StoreHealth(settings.breakerFailures(),
                settings.breakerCoolDownMillis()), time, settings);
        NearCache nearCache = new NearCache(pool, settings, time);
        PlacementProposer proposer = new PlacementProposer(placement.placer(), placement.board(), placement.counts(),
                time, placement.random(), placement.groups());
        WriteBacks writeBacks = new WriteBacks(store, guard, nearCache, time, settings);
        SessionUpkeep upkeep = new SessionUpkeep(store, guard, nearCache, writeBacks, proposer, time, settings);
        Reconciler reconciler = new Reconciler(nearCache, feed, guard, new LostDrivers(store, guard, settings),
                writeBacks);
        pool.onChange(reconciler::onPoolChange);
        SessionRouter router = new SessionRouter(pool, refresher, store, guard, nearCache, proposer, upkeep,
                writeBacks, placement.groups());
        return new Routing(router, reconciler, nearCache, proposer, guard);
    }
}
