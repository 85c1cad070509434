package io.scrouter.extproc.testing;

import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.extproc.routing.RouterSettings;
import io.scrouter.extproc.routing.Routing;
import io.scrouter.extproc.routing.SessionCounts;
import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.extproc.session.BindingFeed;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.PolicySettings;
import io.scrouter.scorer.policy.SeedPolicy;
import io.scrouter.scorer.smoothing.Ewma;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * The routing side wired for a test: over a pool the test holds (a refresh re-reads whatever the pool holds
 * now, so it never undoes the test's changes), a store the test picks, the seed policy at its design weights,
 * no peer routers, and seeded randomness.
 */
public final class Routings {

    /** The load board tests use: EWMA 0.5 over a 1 s probe interval, stale after 5 s. */
    public static LoadBoard board() {
        return new LoadBoard(new Ewma(0.5, 1000), 5000);
    }

    private Routings() {
    }

    public static Routing over(ServerPool pool, SessionStore store, RouterSettings settings, TimeSource time) {
        return over(pool, store, board(), settings, time);
    }

    public static Routing over(ServerPool pool, SessionStore store, LoadBoard board, RouterSettings settings,
                               TimeSource time) {
        PoolRefresher refresher = new PoolRefresher(() -> CompletableFuture.completedFuture(
                List.copyOf(pool.snapshot().all())), pool, Duration.ofSeconds(1), time::millis);
        SplittableRandom random = new SplittableRandom(1);
        return Routing.assemble(pool, refresher, store, BindingFeed.NONE,
                new Routing.PlacementInputs(new Placer(SeedPolicy.withDefaults(PolicySettings.DEFAULTS.sessionCap())),
                        board, new SessionCounts(store), () -> random, ReplicaGroups.NONE),
                settings, time);
    }
}
