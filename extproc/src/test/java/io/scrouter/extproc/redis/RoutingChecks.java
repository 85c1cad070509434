package io.scrouter.extproc.redis;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What two routers over any Redis topology must do, checked through real ext_proc requests: read the pool
 * from the instance store, place new sessions and bind them in Redis, keep a session on its replica whatever
 * the load, agree on a new session both see at the same moment, learn each other's bindings from the feed,
 * and count sessions per replica from Redis. Expected values come from what the routers answered and what the
 * test set, never from the code under test.
 */
final class RoutingChecks {

    /** Sessions both routers see at the same moment; with equal loads each router alone would pick at random. */
    static final int SIMULTANEOUS_SESSIONS = 24;

    private final TopologyRig rig;
    private final RouterServer a;
    private final RouterServer b;
    private final ExtProcClient envoyA;
    private final ExtProcClient envoyB;
    /** Every session bound during the checks → the replica id the routers answered with. */
    private final Map<String, String> bound = new HashMap<>();

    RoutingChecks(TopologyRig rig, RouterServer a, RouterServer b) {
        this.rig = rig;
        this.a = a;
        this.b = b;
        this.envoyA = rig.envoyFor(a);
        this.envoyB = rig.envoyFor(b);
    }

    /** Runs every check in order. */
    void all() throws Exception {
        poolComesFromTheInstanceStore();
        String session = newSessionIsPlacedAndBoundInRedis();
        peerLearnsTheBindingFromTheFeed(session);
        sessionStaysOnItsReplicaWhateverTheLoad(session);
        routersAgreeOnSimultaneousNewSessions();
        sessionCountsComeFromRedis();
    }

    void poolComesFromTheInstanceStore() throws Exception {
        for (RouterServer rs : List.of(a, b)) {
            rig.await("the pool read from the instance store", () -> rs.pool().snapshot().size() == TopologyRig.REPLICAS);
            for (Replica r : rig.replicas()) {
                assertThat(rs.pool().snapshot().get(r.id())).as("replica %s in the pool", r.id()).isEqualTo(r);
            }
        }
        // Not just the first read: a state change published now reaches both routers' pools by polling.
        Replica warming = new Replica("r-late", "127.0.0.1:27099", rig.rest(0).url(), ReplicaState.WARMING);
        rig.publish(warming);
        for (RouterServer rs : List.of(a, b)) {
            rig.await("the late replica in the pool", () -> warming.equals(rs.pool().snapshot().get("r-late")));
        }
        awaitFreshLoads();
    }

    private void awaitFreshLoads() {
        for (RouterServer rs : List.of(a, b)) {
            rig.await("fresh load samples of every replica", () -> {
                long now = System.currentTimeMillis();
                return rig.replicas().stream().allMatch(r -> rs.board().isFresh(r.id(), now));
            });
        }
    }

    String newSessionIsPlacedAndBoundInRedis() throws Exception {
        String session = UUID.randomUUID().toString();
        String upstream = rig.route(envoyA, "Config", session);
        Replica chosen = rig.replicaAt(upstream);
        // The warming replica never takes a new session.
        assertThat(chosen.state()).isEqualTo(ReplicaState.READY);
        assertThat(rig.storedBinding(session)).as("binding stored in Redis").isEqualTo(chosen.id());
        bound.put(session, chosen.id());
        return session;
    }

    void peerLearnsTheBindingFromTheFeed(String session) {
        // Router B never saw a request of this session: only the binding feed (pub/sub or stream) can tell it.
        String replica = bound.get(session);
        rig.await("router B to learn " + session + " from the binding feed",
                () -> b.routing().nearCache().binding(session).map(x -> x.replicaId().equals(replica)).orElse(false));
    }

    void sessionStaysOnItsReplicaWhateverTheLoad(String session) throws Exception {
        Replica home = rig.replicas().stream().filter(r -> r.id().equals(bound.get(session))).findFirst().orElseThrow();
        int homeIndex = rig.indexOf(home);
        // The session's replica becomes by far the busiest: utilisation (2 + 20) / 2 = 11.
        rig.rest(homeIndex).load(2, 20, 2);
        for (RouterServer rs : List.of(a, b)) {
            rig.await(home.id() + " seen busy", () -> Math.abs(rs.board().get(home.id()).utilisation() - 11.0) < 1e-9);
        }
        for (String method : List.of("ExecutePlan", "AnalyzePlan", "ReattachExecute", "AddArtifacts", "Interrupt",
                "Config")) {
            assertThat(rig.route(envoyA, method, session)).as(method + " via A").isEqualTo(home.grpcAddress());
            assertThat(rig.route(envoyB, method, session)).as(method + " via B").isEqualTo(home.grpcAddress());
        }
        // ...while a new session avoids it.
        String other = UUID.randomUUID().toString();
        String upstream = rig.route(envoyB, "Config", other);
        assertThat(upstream).as("a new session while %s is busy", home.id()).isNotEqualTo(home.grpcAddress());
        bound.put(other, rig.replicaAt(upstream).id());
        rig.rest(homeIndex).load(0, 0, 2);
        for (RouterServer rs : List.of(a, b)) {
            rig.await(home.id() + " seen idle again", () -> rs.board().get(home.id()).utilisation() < 1e-9);
        }
    }

    void routersAgreeOnSimultaneousNewSessions() throws Exception {
        routersAgreeOnSimultaneousNewSessions(SIMULTANEOUS_SESSIONS, () -> UUID.randomUUID().toString());
    }

    /** Sends each new session to both routers at the same moment; both must answer what Redis then holds. */
    void routersAgreeOnSimultaneousNewSessions(int count, SessionSource newSession) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        List<String> disagreements = new ArrayList<>();
        Set<String> used = new java.util.HashSet<>();
        try {
            for (int i = 0; i < count; i++) {
                String session = newSession.next();
                CountDownLatch go = new CountDownLatch(1);
                Future<String> viaA = threads.submit(() -> {
                    go.await();
                    return rig.route(envoyA, "ExecutePlan", session);
                });
                Future<String> viaB = threads.submit(() -> {
                    go.await();
                    return rig.route(envoyB, "ExecutePlan", session);
                });
                go.countDown();
                String ua = viaA.get(30, TimeUnit.SECONDS);
                String ub = viaB.get(30, TimeUnit.SECONDS);
                String stored = rig.storedBinding(session);
                if (!ua.equals(ub) || !rig.replicaAt(ua).id().equals(stored)) {
                    disagreements.add(session + ": A→" + ua + " B→" + ub + " Redis→" + stored);
                }
                bound.put(session, rig.replicaAt(ua).id());
                used.add(ua);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(disagreements).as("sessions the two routers placed differently").isEmpty();
        // Equal loads: a router choosing alone would spread them; all on one replica would mean no real choice.
        assertThat(used).as("replicas the new sessions went to").hasSizeGreaterThan(1);
    }

    /** Where new session ids come from (a test may need them on one cluster node). */
    interface SessionSource {
        String next() throws Exception;
    }

    void sessionCountsComeFromRedis() throws Exception {
        Map<String, Long> expected = new HashMap<>();
        for (Replica r : rig.replicas()) {
            expected.put(r.id(), bound.values().stream().filter(r.id()::equals).count());
        }
        List<String> ids = rig.replicas().stream().map(Replica::id).toList();
        // The store's own count (one pipelined batch over every replica's index, across nodes on a cluster).
        Map<String, Long> counted = b.sessions().countSessions(ids)
                .get(rig.storeCallBound().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(counted).as("live sessions per replica counted in Redis").isEqualTo(expected);
        // And what both routers' placement reads, refreshed on each pool poll.
        for (RouterServer rs : List.of(a, b)) {
            rig.await("session counts " + expected + " on both routers", () -> ids.stream()
                    .allMatch(id -> rs.counts().get(id) == expected.get(id)));
        }
    }
}
