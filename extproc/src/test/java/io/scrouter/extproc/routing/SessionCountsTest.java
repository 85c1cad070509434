package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.SessionStore;
import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The session term of the score: the store's count plus this router's own placements since that count, so a
 * burst between two refreshes is seen at once and a failed refresh does not reset anything.
 */
class SessionCountsTest {

    /** A store whose only used calls, the two counts, answer with whatever the test sets. */
    private static final class CountingStore implements SessionStore {
        final AtomicReference<CompletableFuture<Map<String, Long>>> next = new AtomicReference<>();
        /** The recent count's answer; null: the same as the plain count's. */
        final AtomicReference<CompletableFuture<Map<String, Long>>> nextRecent = new AtomicReference<>();
        final AtomicReference<Long> windowAsked = new AtomicReference<>();

        @Override
        public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
            return next.get();
        }

        @Override
        public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds,
                                                                  long recentWithinMillis) {
            windowAsked.set(recentWithinMillis);
            CompletableFuture<Map<String, Long>> recent = nextRecent.get();
            return recent == null ? next.get() : recent;
        }

        @Override
        public CompletableFuture<Optional<Binding>> find(String sessionId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replicaId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<io.scrouter.extproc.session.Lookup> findOrBind(String sessionId, String replicaIfNew) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Binding> claim(String sessionId, String replicaId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Boolean> touch(String sessionId, String replicaId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Void> release(String sessionId, String replicaId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Long> evictReplica(String replicaId) {
            throw new UnsupportedOperationException();
        }
    }

    private static final List<String> AB = List.of("a", "b");

    private final CountingStore store = new CountingStore();
    private final SessionCounts counts = new SessionCounts(store);

    private void refreshWith(Map<String, Long> stored) throws Exception {
        store.next.set(CompletableFuture.completedFuture(stored));
        counts.refresh(AB, 1_000).get(10, TimeUnit.SECONDS);
    }

    @Test
    void unknownReplicaCountsZero() {
        assertThat(counts.get("a")).isZero();
    }

    @Test
    void localPlacementsCountAtOnce() {
        counts.noteBound("a");
        counts.noteBound("a");
        counts.noteBound("b");

        assertThat(counts.get("a")).isEqualTo(2);
        assertThat(counts.get("b")).isEqualTo(1);
    }

    @Test
    void localPlacementsAreAddedToTheStoredCountUntilTheNextRefresh() throws Exception {
        refreshWith(Map.of("a", 5L, "b", 1L));

        counts.noteBound("a");
        counts.noteBound("a");

        assertThat(counts.get("a")).isEqualTo(7);
        assertThat(counts.get("b")).isEqualTo(1);
    }

    @Test
    void aSessionReleasedThroughThisRouterStopsCountingAtOnceAndTheNextRefreshAgrees() throws Exception {
        refreshWith(Map.of("a", 1L, "b", 0L));
        counts.noteBound("a");
        counts.noteReleased("a");
        counts.noteReleased("a");

        assertThat(counts.get("a")).isZero();
        assertThat(counts.recent("a")).isZero();
        // Released sessions are gone from the store's index, so its next count has neither.
        refreshWith(Map.of("a", 0L, "b", 0L));
        assertThat(counts.get("a")).isZero();
        counts.noteBound("a");
        assertThat(counts.get("a")).as("a later placement counts in full").isEqualTo(1);
        // Never below zero, even for a release of a session the store had not counted yet.
        counts.noteReleased("b");
        assertThat(counts.get("b")).isZero();
        counts.noteBound("b");
        assertThat(counts.get("b")).isEqualTo(1);
    }

    @Test
    void refreshReplacesLocalPlacementsWithTheStoresFigure() throws Exception {
        counts.noteBound("a");
        counts.noteBound("a");

        // The store's count now includes those two placements (and one by another router).
        refreshWith(Map.of("a", 3L, "b", 0L));

        assertThat(counts.get("a")).isEqualTo(3);
        assertThat(counts.get("b")).isZero();
    }

    @Test
    void placementDuringARefreshIsKept() throws Exception {
        counts.noteBound("a");
        CompletableFuture<Map<String, Long>> pending = new CompletableFuture<>();
        store.next.set(pending);
        CompletableFuture<Void> refreshing = counts.refresh(AB, 10_000);

        counts.noteBound("a");
        pending.complete(Map.of("a", 1L, "b", 0L));
        refreshing.get(10, TimeUnit.SECONDS);

        // The count may not include the placement made while it ran, so that one stays added.
        assertThat(counts.get("a")).isEqualTo(2);
    }

    @Test
    void failedRefreshKeepsThePreviousCountsAndLocalPlacements() throws Exception {
        refreshWith(Map.of("a", 5L, "b", 1L));
        counts.noteBound("a");

        store.next.set(CompletableFuture.failedFuture(new IllegalStateException("redis down")));
        CompletableFuture<Void> r = counts.refresh(AB, 1_000);

        // The refresh never fails its caller; the figures are unchanged.
        r.get(10, TimeUnit.SECONDS);
        assertThat(r).isCompletedWithValue(null);
        assertThat(counts.get("a")).isEqualTo(6);
        assertThat(counts.get("b")).isEqualTo(1);
    }

    @Test
    void hungRefreshTimesOutAndKeepsThePreviousCounts() throws Exception {
        refreshWith(Map.of("a", 5L, "b", 1L));
        counts.noteBound("b");

        store.next.set(new CompletableFuture<>()); // never answers
        counts.refresh(AB, 20).get(10, TimeUnit.SECONDS);

        assertThat(counts.get("a")).isEqualTo(5);
        assertThat(counts.get("b")).isEqualTo(2);
    }

    @Test
    void recentSessionsAreTheStoresRecentFigurePlusThisRoutersPlacements() throws Exception {
        store.nextRecent.set(CompletableFuture.completedFuture(Map.of("a", 1L, "b", 0L)));
        refreshWith(Map.of("a", 9L, "b", 2L));
        counts.noteBound("b");

        // A session just placed has not had time to be idle: it is recent as well as bound.
        assertThat(counts.recent("a")).isEqualTo(1);
        assertThat(counts.recent("b")).isEqualTo(1);
        assertThat(counts.get("a")).isEqualTo(9);
        assertThat(counts.get("b")).isEqualTo(3);
        assertThat(store.windowAsked.get()).isEqualTo(SessionCounts.DEFAULT_RECENT_WINDOW_MILLIS);
    }

    @Test
    void aFailedRecentCountKeepsBothPreviousFigures() throws Exception {
        store.nextRecent.set(CompletableFuture.completedFuture(Map.of("a", 1L, "b", 0L)));
        refreshWith(Map.of("a", 9L, "b", 2L));

        store.nextRecent.set(CompletableFuture.failedFuture(new IllegalStateException("redis down")));
        refreshWith(Map.of("a", 4L, "b", 4L));

        assertThat(counts.get("a")).isEqualTo(9);
        assertThat(counts.recent("a")).isEqualTo(1);
    }

    @Test
    void theRecentWindowCoversSeveralPushesOfABusySession() {
        // Routers push a busy session's idle timer once per refreshEvery: a window shorter than a few pushes would
        // take sessions in use for idle ones.
        assertThat(SessionCounts.recentWindowFor(30_000)).isEqualTo(120_000);
        assertThat(SessionCounts.recentWindowFor(1_000)).isEqualTo(120_000);
        assertThat(SessionCounts.recentWindowFor(60_000)).isEqualTo(240_000);
        assertThat(new SessionCounts(store, 5_000)).isNotNull();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new SessionCounts(store, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("recent window must be positive");
    }

    @Test
    void replicasNoLongerCountedAreForgotten() throws Exception {
        refreshWith(Map.of("a", 5L, "b", 1L));
        counts.noteBound("a");

        // "a" left the pool: the next count is for "b" only.
        store.next.set(CompletableFuture.completedFuture(Map.of("b", 1L)));
        counts.refresh(List.of("b"), 1_000).get(10, TimeUnit.SECONDS);

        assertThat(counts.get("a")).isZero();
        assertThat(counts.get("b")).isEqualTo(1);
    }
}
