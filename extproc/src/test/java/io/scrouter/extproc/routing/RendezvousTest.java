package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The fallback placement while the store is unreachable: every router must compute the same answer from
 * the same pool, spread sessions evenly, and move as few sessions as possible when the pool changes.
 */
class RendezvousTest {

    private static final List<Replica> FOUR = List.of(replica("spark-0"), replica("spark-1"), replica("spark-2"),
            replica("spark-3"));

    private static Replica replica(String id) {
        int n = Integer.parseInt(id.substring(id.indexOf('-') + 1));
        return new Replica(id, "10.0.0." + (n + 1) + ":15002", null, ReplicaState.READY);
    }

    /** Session ids from a fixed seed, so the test sees the same ids on every run. */
    private static List<String> sessions(int n) {
        Random random = new Random(20240601L);
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new UUID(random.nextLong(), random.nextLong()).toString());
        }
        return out;
    }

    @Test
    void sameSessionGetsSameReplicaWhateverTheListOrder() {
        Random shuffler = new Random(7);
        for (String session : sessions(500)) {
            Replica expected = Rendezvous.pick(session, FOUR);
            for (int i = 0; i < 5; i++) {
                List<Replica> shuffled = new ArrayList<>(FOUR);
                Collections.shuffle(shuffled, shuffler);
                assertThat(Rendezvous.pick(session, shuffled)).as(session).isEqualTo(expected);
            }
        }
    }

    @Test
    void pickIsAPureFunctionOfItsInput() {
        // Equal but separately built replica objects (as two routers would hold) give the same answer.
        List<Replica> copy = List.of(replica("spark-0"), replica("spark-1"), replica("spark-2"), replica("spark-3"));
        for (String session : sessions(200)) {
            assertThat(Rendezvous.pick(session, copy)).isEqualTo(Rendezvous.pick(session, FOUR));
        }
    }

    @Test
    void sessionsSpreadEvenlyOverFourReplicas() {
        int n = 10_000;
        Map<String, Integer> perReplica = new HashMap<>();
        for (String session : sessions(n)) {
            perReplica.merge(Rendezvous.pick(session, FOUR).id(), 1, Integer::sum);
        }

        int fair = n / FOUR.size();
        assertThat(perReplica).hasSize(4);
        assertThat(perReplica.values()).allSatisfy(count ->
                assertThat(count).isBetween((int) (fair * 0.8), (int) (fair * 1.2)));
    }

    @Test
    void removingAReplicaMovesOnlyItsOwnSessions() {
        List<Replica> three = FOUR.stream().filter(r -> !r.id().equals("spark-2")).toList();
        int moved = 0;
        int onRemoved = 0;
        Map<String, Integer> receivers = new HashMap<>();
        for (String session : sessions(10_000)) {
            Replica before = Rendezvous.pick(session, FOUR);
            Replica after = Rendezvous.pick(session, three);
            if (before.id().equals("spark-2")) {
                onRemoved++;
                receivers.merge(after.id(), 1, Integer::sum);
            } else {
                assertThat(after).as("session %s was not on the removed replica", session).isEqualTo(before);
            }
            if (!after.equals(before)) {
                moved++;
            }
        }
        assertThat(moved).isEqualTo(onRemoved).isPositive();
        // The orphans spread over the survivors instead of piling onto one.
        assertThat(receivers).hasSize(3);
    }

    @Test
    void addingAReplicaMovesSessionsOnlyOntoIt() {
        List<Replica> five = new ArrayList<>(FOUR);
        five.add(replica("spark-4"));
        for (String session : sessions(5_000)) {
            Replica before = Rendezvous.pick(session, FOUR);
            Replica after = Rendezvous.pick(session, five);
            if (!after.equals(before)) {
                assertThat(after.id()).isEqualTo("spark-4");
            }
        }
    }

    @Test
    void singleReplicaGetsEverySession() {
        List<Replica> one = List.of(replica("spark-7"));
        for (String session : sessions(100)) {
            assertThat(Rendezvous.pick(session, one).id()).isEqualTo("spark-7");
        }
    }

    @Test
    void emptyListIsRefused() {
        assertThatThrownBy(() -> Rendezvous.pick("00000000-0000-0000-0000-000000000001", List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
