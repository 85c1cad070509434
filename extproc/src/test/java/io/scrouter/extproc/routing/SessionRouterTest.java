package io.scrouter.extproc.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.SeedPolicy;
import io.scrouter.scorer.smoothing.Ewma;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The decision path on its own: an in-memory store the test can make fail, a pool the test replaces, and a
 * clock the test moves.
 */
class SessionRouterTest {

    private static final String PATH = "/spark.connect.SparkConnectService/ExecutePlan";

    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    private final ServerPool pool = new ServerPool();
    private final InMemorySessionStore memory = new InMemorySessionStore(new SessionTtls(Duration.ofMinutes(30),
            Duration.ofHours(1), Duration.ofMinutes(10)), clock::get);
    private final AtomicInteger evictionsToFail = new AtomicInteger();
    private volatile boolean storeDown;
    private final LoadBoard board = new LoadBoard(new Ewma(0.5, 1000), 5000);
    private final AtomicInteger evictionAttempts = new AtomicInteger();

    /** The in-memory store, but marking a replica's sessions lost fails while {@link #evictionsToFail} says so. */
    private final SessionStore store = new SessionStore() {
        @Override
        public CompletableFuture<Optional<Binding>> find(String sessionId) {
            return memory.find(sessionId);
        }

        @Override
        public CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew) {
            return storeDown ? CompletableFuture.failedFuture(new IllegalStateException("store unreachable"))
                    : memory.findOrBind(sessionId, replicaIfNew);
        }

        @Override
        public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replica) {
            return memory.bindIfAbsent(sessionId, replica);
        }

        @Override
        public CompletableFuture<Binding> claim(String sessionId, String replica) {
            return memory.claim(sessionId, replica);
        }

        @Override
        public CompletableFuture<Boolean> touch(String sessionId, String replica) {
            return memory.touch(sessionId, replica);
        }

        @Override
        public CompletableFuture<Void> release(String sessionId, String replica) {
            return memory.release(sessionId, replica);
        }

        @Override
        public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
            return memory.countSessions(replicaIds);
        }

        @Override
        public CompletableFuture<Long> evictReplica(String replica) {
            evictionAttempts.incrementAndGet();
            if (evictionsToFail.getAndDecrement() > 0) {
                return CompletableFuture.failedFuture(new IllegalStateException("store unreachable"));
            }
            return memory.evictReplica(replica);
        }
    };

    private SessionRouter router() {
        // The instance store is whatever the pool holds now, so a refresh never undoes the test's replace.
        PoolRefresher refresher = new PoolRefresher(() -> CompletableFuture.completedFuture(
                List.copyOf(pool.snapshot().all())), pool, Duration.ofSeconds(1), clock::get);
        return new SessionRouter(pool, refresher, store, board,
                new Placer(SeedPolicy.withDefaults(50)), new SessionCounts(store), new StoreHealth(3, 1000),
                new RouterSettings(50, 1000, 1000, 1000, 60_000, 60_000, 0), clock::get);
    }

    private static Decision decide(SessionRouter router, String session) throws Exception {
        return router.decide(PATH, session).get(5, TimeUnit.SECONDS);
    }

    @Test
    void aSessionOfADriverThatIsGoneIsRefusedEvenBeforeItsTombstoneIsWrittenAndMarkingIsRetried()
            throws Exception {
        pool.replace(List.of(new Replica("x", "127.0.0.1:30001", null, ReplicaState.READY, "app-1")));
        SessionRouter router = router();
        String session = UUID.randomUUID().toString();
        assertThat(decide(router, session)).isInstanceOf(Decision.Route.class);

        // The driver restarts in place; the store cannot mark its sessions lost for the next two attempts.
        evictionsToFail.set(2);
        pool.replace(List.of(new Replica("x", "127.0.0.1:30001", null, ReplicaState.READY, "app-2")));

        // The store still holds the live binding to the old driver: the request path itself refuses it.
        assertThat(memory.find(session).get()).contains(Binding.to("x@app-1"));
        Decision refused = decide(router, session);
        assertThat(refused).isInstanceOfSatisfying(Decision.Reject.class,
                r -> assertThat(r.code()).isEqualTo(Status.Code.FAILED_PRECONDITION));

        // Every pool poll tries again until the store has done it.
        for (int poll = 0; poll < 5 && !memory.find(session).get().map(Binding::lost).orElse(false); poll++) {
            router.reconcile();
        }
        assertThat(memory.find(session).get()).contains(Binding.lostOn("x@app-1"));
        assertThat(evictionAttempts.get()).isEqualTo(3);
        assertThat(decide(router, UUID.randomUUID().toString())).as("new sessions go to the new driver")
                .isInstanceOfSatisfying(Decision.Route.class, r -> assertThat(r.replica().instance()).isEqualTo("app-2"));
    }

    @Test
    void withTheStoreDownANewSessionIsNeverPlacedOnAReplicaWhoseProbesFail() throws Exception {
        pool.replace(List.of(new Replica("a", "127.0.0.1:30001", null, ReplicaState.READY),
                new Replica("b", "127.0.0.1:30002", null, ReplicaState.READY),
                new Replica("c", "127.0.0.1:30003", null, ReplicaState.READY)));
        board.recordFailure("c", "connection refused");
        SessionRouter router = router();
        storeDown = true;
        // Three failed calls open the breaker; from then on new sessions are placed by rendezvous hashing.
        for (int i = 0; i < 3; i++) {
            decide(router, UUID.randomUUID().toString());
        }
        assertThat(router.storeCircuitOpen()).isTrue();

        java.util.Set<String> placedOn = new java.util.HashSet<>();
        for (int i = 0; i < 300; i++) {
            Decision d = decide(router, UUID.randomUUID().toString());
            assertThat(d).isInstanceOfSatisfying(Decision.Route.class,
                    r -> assertThat(r.outcome()).isEqualTo(Decision.Outcome.FALLBACK));
            placedOn.add(((Decision.Route) d).replica().id());
        }
        assertThat(placedOn).containsExactlyInAnyOrder("a", "b");
    }
}
