package io.scrouter.extproc.routing;

import ch.qos.logback.classic.Level;
import io.grpc.Status;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.LogCapture;
import io.scrouter.extproc.testing.ManualTime;
import io.scrouter.extproc.testing.Routings;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.load.LoadBoard;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The decision path on its own: an in-memory store the test can make fail or hang call by call, a pool the test
 * replaces, and time that moves only when the test moves it. Nothing here sleeps or polls: every store call
 * completes (or fails) before {@code decide} returns, except hung ones, whose deadline fires when time passes it.
 */
class SessionRouterTest {

    private static final String EXECUTE = "/spark.connect.SparkConnectService/ExecutePlan";
    private static final String RELEASE_EXECUTE = "/spark.connect.SparkConnectService/ReleaseExecute";

    /** The settings under test: the shipped defaults (50 ms store deadline, breaker 3 failures / 1 s, settle 5 s). */
    private static final RouterSettings SETTINGS = RouterSettings.defaults();

    private final ManualTime time = new ManualTime();
    private final ServerPool pool = new ServerPool();
    private final LoadBoard board = Routings.board();
    private final InMemorySessionStore memory = new InMemorySessionStore(new SessionTtls(Duration.ofMinutes(30),
            Duration.ofHours(1), Duration.ofMinutes(10)), time::millis);
    private final ScriptedStore store = new ScriptedStore(memory);

    SessionRouterTest() {
        pool.replace(List.of(new Replica("a", "127.0.0.1:30001", null, ReplicaState.READY),
                new Replica("b", "127.0.0.1:30002", null, ReplicaState.READY),
                new Replica("c", "127.0.0.1:30003", null, ReplicaState.READY)));
    }

    private Routing routing() {
        return Routings.over(pool, store, board, SETTINGS, time);
    }

    private static Decision decide(Routing routing, String path, String session) {
        CompletableFuture<Decision> d = routing.router().decide(Request.of(path, session));
        assertThat(d).as("decided without waiting on time").isDone();
        return d.join();
    }

    private static Decision decide(Routing routing, String session) {
        return decide(routing, EXECUTE, session);
    }

    private static String newSession() {
        return UUID.randomUUID().toString();
    }

    private static Decision.Outcome outcome(Decision d) {
        assertThat(d).isInstanceOf(Decision.Route.class);
        return ((Decision.Route) d).outcome();
    }

    private static String reason(Decision d) {
        assertThat(d).isInstanceOf(Decision.Reject.class);
        return ((Decision.Reject) d).reason();
    }

    @Test
    void aFailedRequestCountsOnceSoTheBreakerOpensOnTheConfiguredCountAndWarnsOnce() {
        Routing routing = routing();
        store.fail(Op.FIND_OR_BIND);
        try (LogCapture log = LogCapture.of(GuardedStore.class)) {
            for (int request = 1; request < SETTINGS.breakerFailures(); request++) {
                // A fast failure is retried once, then answered as what it is: unreachable, not a timeout.
                assertThat(reason(decide(routing, newSession()))).isEqualTo("store_unreachable");
                assertThat(store.calls(Op.FIND_OR_BIND)).isEqualTo(2 * request);
                assertThat(routing.store().breakerOpen()).as("open after %d failed requests", request).isFalse();
            }
            // The last failure opens the breaker, and this very request is placed without the store.
            assertThat(outcome(decide(routing, newSession()))).isEqualTo(Decision.Outcome.FALLBACK);
            assertThat(routing.store().breakerOpen()).isTrue();
            assertThat(log.messages(Level.WARN)).hasSize(1).first().asString().contains("session store unreachable");

            // Open: requests do not wait on the store, and nothing more is logged.
            int calls = store.calls(Op.FIND_OR_BIND);
            for (int i = 0; i < 10; i++) {
                assertThat(outcome(decide(routing, newSession()))).isEqualTo(Decision.Outcome.FALLBACK);
            }
            assertThat(store.calls(Op.FIND_OR_BIND)).isEqualTo(calls);
            assertThat(log.messages(Level.WARN)).hasSize(1);
        }
    }

    @Test
    void aTimedOutCallIsNotRetriedAndTheClientIsToldItTimedOut() {
        Routing routing = routing();
        store.hang(Op.FIND_OR_BIND);
        CompletableFuture<Decision> pending = routing.router().decide(Request.of(EXECUTE, newSession()));
        time.advance(Duration.ofMillis(SETTINGS.storeTimeoutMillis() - 1));
        assertThat(pending).as("still within the store deadline").isNotDone();

        time.advance(Duration.ofMillis(1));
        assertThat(reason(pending.join())).isEqualTo("store_timeout");
        assertThat(store.calls(Op.FIND_OR_BIND)).as("a hung store is not asked twice").isEqualTo(1);
    }

    @Test
    void whileOpenOneTrialPerCoolDownReachesTheStoreAndItsSuccessClosesTheBreaker() {
        Routing routing = routing();
        store.fail(Op.FIND_OR_BIND);
        for (int i = 0; i < SETTINGS.breakerFailures(); i++) {
            decide(routing, newSession());
        }
        assertThat(routing.store().breakerOpen()).isTrue();
        int calls = store.calls(Op.FIND_OR_BIND);

        time.advance(Duration.ofMillis(SETTINGS.breakerCoolDownMillis() - 1));
        decide(routing, newSession());
        assertThat(store.calls(Op.FIND_OR_BIND)).as("within the cool-down").isEqualTo(calls);

        // The cool-down passed: one request is the trial. It fails (twice: it is retried), the breaker stays open.
        time.advance(Duration.ofMillis(1));
        decide(routing, newSession());
        decide(routing, newSession());
        assertThat(store.calls(Op.FIND_OR_BIND)).isEqualTo(calls + 2);
        assertThat(routing.store().breakerOpen()).isTrue();

        // The store is back; the next trial, one cool-down later, succeeds and closes the breaker.
        store.heal(Op.FIND_OR_BIND);
        time.advance(Duration.ofMillis(SETTINGS.breakerCoolDownMillis()));
        String session = newSession();
        assertThat(decide(routing, session)).isInstanceOf(Decision.Route.class);
        assertThat(routing.store().breakerOpen()).isFalse();
        assertThat(memory.find(session).join()).isPresent();
    }

    @Test
    void afterAFailureNewSessionsArePlacedByRendezvousForTheSettleWindowThenByThePolicy() {
        Routing routing = routing();
        store.failNext(Op.FIND_OR_BIND, 2);
        assertThat(reason(decide(routing, newSession()))).isEqualTo("store_unreachable");
        assertThat(routing.store().breakerOpen()).isFalse();

        // The store answers again, but another router may still be placing by rendezvous: so does this one.
        time.advance(Duration.ofMillis(SETTINGS.settleMillis() - 1));
        String settling = newSession();
        Decision during = decide(routing, settling);
        assertThat(outcome(during)).isEqualTo(Decision.Outcome.FALLBACK);
        Replica expected = Rendezvous.pick(SessionIds.canonical(settling), pool.snapshot().ready());
        assertThat(((Decision.Route) during).replica()).isEqualTo(expected);
        assertThat(memory.find(settling).join()).as("bound in the store like any placement")
                .contains(Binding.to(expected.boundAs()));

        time.advance(Duration.ofMillis(1));
        assertThat(outcome(decide(routing, newSession()))).isEqualTo(Decision.Outcome.PLACED_DEGRADED);
    }

    @Test
    void aBusySessionsIdleTimerIsPushedAtMostOncePerRefreshInterval() {
        Routing routing = routing();
        String session = newSession();
        decide(routing, session);
        for (int i = 0; i < 20; i++) {
            time.advance(Duration.ofMillis(SETTINGS.refreshEveryMillis() / 20 - 1));
            assertThat(outcome(decide(routing, session))).isEqualTo(Decision.Outcome.KNOWN);
        }
        assertThat(store.calls(Op.TOUCH)).as("within one refresh interval").isZero();

        time.advance(Duration.ofMillis(SETTINGS.refreshEveryMillis()));
        for (int i = 0; i < 5; i++) {
            decide(routing, session);
        }
        assertThat(store.calls(Op.TOUCH)).isEqualTo(1);
        assertThat(store.calls(Op.FIND_OR_BIND)).as("a known session never waits on the store").isEqualTo(1);
    }

    @Test
    void aRunOfShortSessionsLeavesNoPhantomLoadOnTheReplicasThatTookThem() {
        Routing routing = routing();
        Map<String, Integer> placed = new HashMap<>();
        for (int i = 0; i < 6; i++) {
            String session = newSession();
            Decision d = decide(routing, session);
            placed.merge(((Decision.Route) d).replica().id(), 1, Integer::sum);
            decide(routing, "/spark.connect.SparkConnectService/ReleaseSession", session);
            // The client's late clean-up after its release changes nothing.
            decide(routing, RELEASE_EXECUTE, session);
        }
        assertThat(placed.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(6);
        for (Candidate c : routing.placement().candidatesNow(pool.snapshot())) {
            assertThat(c.activeSessions()).as("sessions of %s", c.replicaId()).isZero();
            assertThat(c.recentSessions()).as("recent sessions of %s", c.replicaId()).isZero();
            assertThat(c.unseenPlacements()).as("unseen placements of %s", c.replicaId()).isZero();
        }
    }

    @Test
    void aSessionOnAReplicaThisRouterNeverSawIsToldToRetryNotThatItIsLost() {
        // A router started while the instance store was re-registering (it restarted empty) does not list "d" yet.
        Routing routing = routing();
        String session = newSession();
        memory.bindIfAbsent(session, "d@127.0.0.1:30004").join();
        Decision notListed = decide(routing, session);
        assertThat(reason(notListed)).isEqualTo("replica_not_listed");
        assertThat(((Decision.Reject) notListed).code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(memory.find(session).join()).as("the binding is untouched")
                .contains(Binding.to("d@127.0.0.1:30004"));

        // Once listed, the session is routed where it lives; once this router has seen it leave, it is lost.
        List<Replica> withD = new ArrayList<>(pool.snapshot().all());
        withD.add(new Replica("d", "127.0.0.1:30004", null, ReplicaState.READY));
        pool.replace(withD);
        assertThat(((Decision.Route) decide(routing, session)).replica().id()).isEqualTo("d");
        withD.remove(withD.size() - 1);
        pool.replace(withD);
        assertThat(reason(decide(routing, session))).isEqualTo("session_lost");
    }

    @Test
    void aPlacementMadeWithoutTheStoreIsOfferedAgainUntilTheStoreHasIt() {
        Routing routing = routing();
        store.fail(Op.FIND_OR_BIND);
        for (int i = 0; i < SETTINGS.breakerFailures(); i++) {
            decide(routing, newSession());
        }
        store.fail(Op.CLAIM);
        String session = newSession();
        Replica placed = ((Decision.Route) decide(routing, session)).replica();
        assertThat(memory.find(session).join()).isEmpty();

        // Its next request, once the retry interval has passed, offers it; the store fails, so it is offered again.
        time.advance(Duration.ofMillis(SETTINGS.retryUnconfirmedMillis()));
        assertThat(((Decision.Route) decide(routing, session)).replica()).isEqualTo(placed);
        assertThat(store.calls(Op.CLAIM)).isEqualTo(1);
        decide(routing, session);
        assertThat(store.calls(Op.CLAIM)).as("not before the retry interval").isEqualTo(1);

        // The store is back: the next poll writes it back with no request at all, and the breaker closes.
        store.heal(Op.CLAIM);
        store.heal(Op.FIND_OR_BIND);
        time.advance(Duration.ofMillis(Math.max(SETTINGS.retryUnconfirmedMillis(), SETTINGS.breakerCoolDownMillis())));
        routing.reconciler().reconcile();
        assertThat(memory.find(session).join()).contains(Binding.to(placed.boundAs()));
        assertThat(routing.store().breakerOpen()).isFalse();
        assertThat(routing.nearCache().binding(session)).contains(Binding.to(placed.boundAs()));
    }

    @Test
    void anotherRoutersAnnouncementOfAHeldSessionNeitherReplacesItNorKeepsItAlive() {
        Routing routing = routing();
        String session = newSession();
        Replica placed = ((Decision.Route) decide(routing, session)).replica();
        Replica other = pool.snapshot().all().stream().filter(r -> !r.equals(placed)).findFirst().orElseThrow();

        // Most often this router's own announcement coming back on the feed; hearing of it is not using it.
        Duration idle = Duration.ofMillis(SETTINGS.idleTtlMillis());
        time.advance(idle.minusMinutes(1));
        routing.nearCache().learnPeerBinding(session, other.boundAs());
        assertThat(routing.nearCache().binding(session)).contains(Binding.to(placed.boundAs()));

        time.advance(Duration.ofMinutes(2));
        assertThat(routing.nearCache().binding(session)).as("forgotten an idle TTL after its last request")
                .isEmpty();
    }

    @Test
    void aCleanUpCallForAnUnknownSessionNeverBindsIt() {
        Routing routing = routing();
        String session = newSession();
        assertThat(reason(decide(routing, RELEASE_EXECUTE, session))).isEqualTo("session_not_bound");
        assertThat(memory.find(session).join()).isEmpty();

        // With the store unreachable it has nothing to fall back to: retry, not a guess.
        store.fail(Op.FIND);
        assertThat(reason(decide(routing, RELEASE_EXECUTE, newSession()))).isEqualTo("store_unreachable");
    }

    @Test
    void aSessionOfADriverThatIsGoneIsRefusedEvenBeforeItsTombstoneIsWrittenAndMarkingIsRetried() {
        pool.replace(List.of(new Replica("x", "127.0.0.1:30001", null, ReplicaState.READY, "app-1")));
        Routing routing = routing();
        String session = newSession();
        assertThat(decide(routing, session)).isInstanceOf(Decision.Route.class);

        // The driver restarts in place; the store cannot mark its sessions lost for the next two attempts.
        store.failNext(Op.EVICT, 2);
        pool.replace(List.of(new Replica("x", "127.0.0.1:30001", null, ReplicaState.READY, "app-2")));

        // The store still holds the live binding to the old driver: the request path itself refuses it.
        assertThat(memory.find(session).join()).contains(Binding.to("x@app-1"));
        Decision refused = decide(routing, session);
        assertThat(refused).isInstanceOfSatisfying(Decision.Reject.class,
                r -> assertThat(r.code()).isEqualTo(Status.Code.FAILED_PRECONDITION));

        // Every pool poll tries again until the store has done it.
        for (int poll = 0; poll < 5 && !memory.find(session).join().map(Binding::lost).orElse(false); poll++) {
            routing.reconciler().reconcile();
        }
        assertThat(memory.find(session).join()).contains(Binding.lostOn("x@app-1"));
        assertThat(store.calls(Op.EVICT)).isEqualTo(3);
        assertThat(decide(routing, newSession())).as("new sessions go to the new driver")
                .isInstanceOfSatisfying(Decision.Route.class, r -> assertThat(r.replica().instance()).isEqualTo("app-2"));
    }

    @Test
    void withTheStoreDownANewSessionIsNeverPlacedOnAReplicaWhoseProbesFailButOneSlowProbeChangesNothing() {
        board.recordFailure("b", "timed out");
        for (int i = 0; i < PlacementProposer.DEAD_AFTER_FAILED_PROBES; i++) {
            board.recordFailure("c", "connection refused");
        }
        Routing routing = routing();
        store.fail(Op.FIND_OR_BIND);
        for (int i = 0; i < SETTINGS.breakerFailures(); i++) {
            decide(routing, newSession());
        }
        assertThat(routing.store().breakerOpen()).isTrue();

        Set<String> placedOn = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            Decision d = decide(routing, newSession());
            assertThat(outcome(d)).isEqualTo(Decision.Outcome.FALLBACK);
            placedOn.add(((Decision.Route) d).replica().id());
        }
        // b's single failed probe may be another router's success: b stays in the set every router hashes over.
        assertThat(placedOn).containsExactlyInAnyOrder("a", "b");
    }

    /** Store operations the test can script. */
    enum Op { FIND, FIND_OR_BIND, CLAIM, TOUCH, EVICT }

    /**
     * The in-memory store, with each operation scriptable: answer normally, fail fast (a refused connection), or
     * never answer (a hung Redis). Calls are counted per operation.
     */
    private static final class ScriptedStore implements SessionStore {

        private enum Mode { NORMAL, FAIL, HANG }

        private final SessionStore memory;
        private final Map<Op, Mode> modes = new EnumMap<>(Op.class);
        private final Map<Op, AtomicInteger> failuresLeft = new EnumMap<>(Op.class);
        private final Map<Op, AtomicInteger> calls = new EnumMap<>(Op.class);

        ScriptedStore(SessionStore memory) {
            this.memory = memory;
            for (Op op : Op.values()) {
                modes.put(op, Mode.NORMAL);
                failuresLeft.put(op, new AtomicInteger());
                calls.put(op, new AtomicInteger());
            }
        }

        void fail(Op op) {
            modes.put(op, Mode.FAIL);
        }

        void failNext(Op op, int times) {
            failuresLeft.get(op).set(times);
        }

        void hang(Op op) {
            modes.put(op, Mode.HANG);
        }

        void heal(Op op) {
            modes.put(op, Mode.NORMAL);
        }

        int calls(Op op) {
            return calls.get(op).get();
        }

        private <T> CompletableFuture<T> call(Op op, Supplier<CompletableFuture<T>> real) {
            calls.get(op).incrementAndGet();
            if (failuresLeft.get(op).getAndUpdate(n -> Math.max(0, n - 1)) > 0 || modes.get(op) == Mode.FAIL) {
                return CompletableFuture.failedFuture(new IOException("connection refused (scripted)"));
            }
            return modes.get(op) == Mode.HANG ? new CompletableFuture<>() : real.get();
        }

        @Override
        public CompletableFuture<Optional<Binding>> find(String sessionId) {
            return call(Op.FIND, () -> memory.find(sessionId));
        }

        @Override
        public CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew) {
            return call(Op.FIND_OR_BIND, () -> memory.findOrBind(sessionId, replicaIfNew));
        }

        @Override
        public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replica) {
            return memory.bindIfAbsent(sessionId, replica);
        }

        @Override
        public CompletableFuture<Binding> claim(String sessionId, String replica) {
            return call(Op.CLAIM, () -> memory.claim(sessionId, replica));
        }

        @Override
        public CompletableFuture<Boolean> touch(String sessionId, String replica) {
            return call(Op.TOUCH, () -> memory.touch(sessionId, replica));
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
            return call(Op.EVICT, () -> memory.evictReplica(replica));
        }
    }
}
