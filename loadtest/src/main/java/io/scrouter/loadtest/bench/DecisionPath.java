package io.scrouter.loadtest.bench;

import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.pool.StaticInstanceStore;
import io.scrouter.extproc.routing.NearCache;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.extproc.routing.RouterSettings;
import io.scrouter.extproc.routing.Routing;
import io.scrouter.extproc.routing.SessionCounts;
import io.scrouter.extproc.routing.SessionRouter;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.session.BindingFeed;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import io.scrouter.scorer.smoothing.Ewma;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The service's decision path wired in process exactly as {@code RouterServer} wires it, on the embedded
 * in-memory store and a static pool of {@code replicas} ready replicas with fresh load samples: no gRPC,
 * no Redis, so a benchmark measures the decision itself.
 */
final class DecisionPath {

    final SessionRouter router;
    final NearCache nearCache;
    final InMemorySessionStore store;
    final LoadBoard board;

    DecisionPath(int replicas, long nearCacheMaxSize) throws Exception {
        List<Replica> pool = new ArrayList<>(replicas);
        for (int i = 0; i < replicas; i++) {
            pool.add(new Replica("r" + i, "10." + (i / 250) + "." + (i % 250) + ".1:15002",
                    "http://10.0.0.1:4040", ReplicaState.READY));
        }
        ServerPool serverPool = new ServerPool();
        PoolRefresher refresher = new PoolRefresher(new StaticInstanceStore(pool), serverPool, Duration.ofSeconds(1),
                System::currentTimeMillis);
        refresher.refresh().get(5, TimeUnit.SECONDS);
        store = new InMemorySessionStore(new SessionTtls(Duration.ofMinutes(30), Duration.ofHours(1), Duration.ofMinutes(10)), System::currentTimeMillis);
        // Samples far in the future stay fresh for any run length, so placement is never degraded.
        board = new LoadBoard(new Ewma(0.5, 1_000), Long.MAX_VALUE / 4);
        long now = System.currentTimeMillis();
        for (int i = 0; i < replicas; i++) {
            board.recordSample("r" + i, new LoadSample(i % 7, i % 3, 8), now);
        }
        SessionCounts counts = new SessionCounts(store);
        Placer placer = new Placer(Policies.byName(Policies.DEFAULT, PolicySettings.DEFAULTS));
        RouterSettings settings = RouterSettings.from(ConfigLoader.parse("""
                pool: {static: [{id: r0, grpc: "10.0.0.1:15002"}]}
                sessions: {nearCacheMaxSize: %d}
                """.formatted(nearCacheMaxSize), Map.of()));
        Routing routing = Routing.assemble(serverPool, refresher, store, BindingFeed.NONE,
                new Routing.PlacementInputs(placer, board, counts, ThreadLocalRandom::current, ReplicaGroups.NONE),
                settings,
                SystemTime.shared());
        router = routing.router();
        nearCache = routing.nearCache();
    }
}
