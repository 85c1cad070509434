package io.scrouter.extproc.pool;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pool diff drives session clean-up, so each kind of change must be reported exactly once and exactly. */
class ServerPoolTest {

    private static Replica replica(String id, String address, ReplicaState state) {
        return new Replica(id, address, "http://" + address.replaceAll(":\\d+$", "") + ":4040", state);
    }

    private static final Replica A = replica("a", "10.0.0.1:15002", ReplicaState.READY);
    private static final Replica B = replica("b", "10.0.0.2:15002", ReplicaState.READY);
    private static final Replica C = replica("c", "10.0.0.3:15002", ReplicaState.WARMING);

    private final ServerPool pool = new ServerPool();
    private final List<PoolChange> announced = new ArrayList<>();

    {
        pool.onChange(announced::add);
    }

    @Test
    void newPoolIsEmpty() {
        assertThat(pool.snapshot().size()).isZero();
        assertThat(pool.snapshot().ready()).isEmpty();
    }

    @Test
    void firstReplaceReportsEveryReplicaAsJoined() {
        PoolChange change = pool.replace(List.of(A, B, C));

        assertThat(change.joined()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(change.left()).isEmpty();
        assertThat(change.stateChanged()).isEmpty();
        assertThat(change.before().size()).isZero();
        assertThat(change.after()).isSameAs(pool.snapshot());
        assertThat(announced).containsExactly(change);
    }

    @Test
    void vanishedReplicaIsReportedAsLeft() {
        pool.replace(List.of(A, B, C));

        PoolChange change = pool.replace(List.of(A, C));

        assertThat(change.left()).containsExactly("b");
        assertThat(change.joined()).isEmpty();
        assertThat(change.stateChanged()).isEmpty();
        assertThat(pool.snapshot().get("b")).isNull();
    }

    @Test
    void stateChangeIsReportedWithoutLeaveOrJoin() {
        pool.replace(List.of(A, B));

        PoolChange change = pool.replace(List.of(replica("a", "10.0.0.1:15002", ReplicaState.DRAINING), B));

        assertThat(change.stateChanged()).containsExactly("a");
        assertThat(change.joined()).isEmpty();
        assertThat(change.left()).isEmpty();
        assertThat(pool.snapshot().get("a").state()).isEqualTo(ReplicaState.DRAINING);
    }

    @Test
    void metricsUrlChangeIsAStateChangeNotANewReplica() {
        // Same driver (same gRPC address), new metrics endpoint: its sessions are still there.
        pool.replace(List.of(A));

        PoolChange change = pool.replace(List.of(new Replica("a", "10.0.0.1:15002", "http://10.0.0.9:4040",
                ReplicaState.READY)));

        assertThat(change.stateChanged()).containsExactly("a");
        assertThat(change.left()).isEmpty();
        assertThat(change.joined()).isEmpty();
    }

    @Test
    void addressChangeOfSameIdCountsAsLeftAndJoined() {
        // A new address means a new Spark driver: the old one's sessions are gone.
        pool.replace(List.of(A, B));

        PoolChange change = pool.replace(List.of(replica("a", "10.0.0.7:15002", ReplicaState.READY), B));

        assertThat(change.left()).containsExactly("a");
        assertThat(change.joined()).containsExactly("a");
        assertThat(change.stateChanged()).isEmpty();
        assertThat(pool.snapshot().get("a").grpcAddress()).isEqualTo("10.0.0.7:15002");
    }

    @Test
    void mixedChangeReportsEachKindExactly() {
        pool.replace(List.of(A, B, C));

        Replica cReady = replica("c", "10.0.0.3:15002", ReplicaState.READY);
        Replica d = replica("d", "10.0.0.4:15002", ReplicaState.READY);
        PoolChange change = pool.replace(List.of(cReady, d, A));

        assertThat(change.joined()).isEqualTo(Set.of("d"));
        assertThat(change.left()).isEqualTo(Set.of("b"));
        assertThat(change.stateChanged()).isEqualTo(Set.of("c"));
    }

    @Test
    void identicalReplaceIsEmptyAndNotAnnounced() {
        pool.replace(List.of(A, B));
        PoolSnapshot before = pool.snapshot();
        announced.clear();

        // Same members (equal but distinct objects) in another order: no change at all.
        PoolChange change = pool.replace(List.of(B, new Replica("a", "10.0.0.1:15002", A.metricsUrl(),
                ReplicaState.READY)));

        assertThat(change.isEmpty()).isTrue();
        assertThat(announced).isEmpty();
        assertThat(pool.snapshot()).isSameAs(before);
    }

    @Test
    void nonCanonicalSpellingOfTheSameAddressIsNoChange() {
        pool.replace(List.of(new Replica("x", "10.0.0.9:80", null, ReplicaState.READY)));
        announced.clear();

        PoolChange change = pool.replace(List.of(new Replica("x", "10.0.0.9:0080", null, ReplicaState.READY)));

        assertThat(change.isEmpty()).isTrue();
        assertThat(announced).isEmpty();
    }

    @Test
    void listenersSeeEveryChangeInOrder() {
        List<PoolChange> second = new ArrayList<>();
        pool.onChange(second::add);

        pool.replace(List.of(A));
        pool.replace(List.of(A));
        pool.replace(List.of(A, B));
        pool.replace(List.of());

        assertThat(announced).hasSize(3);
        assertThat(second).isEqualTo(announced);
        assertThat(announced.get(0).joined()).containsExactly("a");
        assertThat(announced.get(1).joined()).containsExactly("b");
        assertThat(announced.get(2).left()).containsExactlyInAnyOrder("a", "b");
        assertThat(announced.get(2).after().size()).isZero();
    }

    @Test
    void readyListHoldsOnlyReadyReplicas() {
        Replica draining = replica("d", "10.0.0.4:15002", ReplicaState.DRAINING);

        pool.replace(List.of(A, C, draining, B));

        assertThat(pool.snapshot().ready()).containsExactly(A, B);
        assertThat(pool.snapshot().all()).containsExactly(A, C, draining, B);
        assertThat(pool.snapshot().get("c")).isEqualTo(C);
    }

    @Test
    void duplicateIdsAreRefusedAndThePoolIsKept() {
        pool.replace(List.of(A));
        PoolSnapshot before = pool.snapshot();
        announced.clear();

        assertThatThrownBy(() -> pool.replace(List.of(B, replica("b", "10.0.0.9:15002", ReplicaState.READY))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'b'");
        assertThat(pool.snapshot()).isSameAs(before);
        assertThat(announced).isEmpty();
    }

    @Test
    void snapshotIsImmutable() {
        pool.replace(List.of(A, B));
        PoolSnapshot s = pool.snapshot();

        assertThatThrownBy(() -> s.all().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> s.ready().clear()).isInstanceOf(UnsupportedOperationException.class);
    }
}
