package io.scrouter.extproc.session;

import io.scrouter.extproc.testing.Patience;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The semantic contract of {@link SessionStore}, run against every implementation: the embedded in-memory
 * store must behave like the shared Redis one, or the default mode would test something else than production.
 *
 * <p>Only behaviour that does not depend on wall-clock expiry is here; the session counts are driven by the
 * injected clock in both stores, so their expiry is part of the contract too.
 */
abstract class SessionStoreContract {

    static final Duration IDLE = Duration.ofSeconds(60);
    static final Duration LOST = Duration.ofSeconds(120);
    /** Shorter than {@link #IDLE}, so a test can tell which of the two a key got. */
    static final Duration RELEASE_GRACE = Duration.ofSeconds(15);
    static final String S1 = "00000000-0000-0000-0000-000000000001";
    static final String S2 = "00000000-0000-0000-0000-000000000002";
    static final String S3 = "00000000-0000-0000-0000-000000000003";
    static final String S4 = "00000000-0000-0000-0000-000000000004";

    protected final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    protected SessionStore store;

    /** A fresh, empty store with these TTLs, reading time from {@code clock}. */
    protected abstract SessionStore createStore(Duration idleTtl, Duration lostTtl, LongSupplier clock)
            throws Exception;

    @BeforeEach
    void createContractStore() throws Exception {
        store = createStore(IDLE, LOST, clock::get);
    }

    /**
     * One store call: Redisson's default call timeout (3 s, which the Redis test's client keeps) with room. The
     * in-memory store answers at once.
     */
    static final Duration STORE_CALL = Patience.of(Duration.ofSeconds(3));

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(STORE_CALL.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Returns once the store's replica index lists {@code session} under {@code replica}. The Redis store writes
     * the index after it has answered a bind (a decision does not wait for it), so a count or an eviction that
     * follows a bind at once may not see it yet; tests of counts and evictions start from indexed bindings.
     */
    protected void awaitIndexed(String session, String replica) throws Exception {
    }

    Optional<Binding> find(String session) throws Exception {
        return await(store.find(session));
    }

    Binding bind(String session, String replica) throws Exception {
        Binding b = await(store.bindIfAbsent(session, replica));
        if (b.state() == Binding.State.LIVE) {
            awaitIndexed(session, b.replicaId());
        }
        return b;
    }

    Map<String, Long> count(String... replicas) throws Exception {
        return await(store.countSessions(List.of(replicas)));
    }

    @Test
    void unknownSessionIsNotFound() throws Exception {
        assertThat(find(S1)).isEmpty();
    }

    @Test
    void firstBindingWinsAndLaterOnesGetIt() throws Exception {
        assertThat(bind(S1, "a")).isEqualTo(Binding.to("a"));
        assertThat(bind(S1, "b")).isEqualTo(Binding.to("a"));
        assertThat(bind(S1, "a")).isEqualTo(Binding.to("a"));

        assertThat(find(S1)).contains(Binding.to("a"));
    }

    @Test
    void sessionsAreIndependent() throws Exception {
        bind(S1, "a");
        bind(S2, "b");

        assertThat(find(S1)).contains(Binding.to("a"));
        assertThat(find(S2)).contains(Binding.to("b"));
        assertThat(find(S3)).isEmpty();
    }

    @Test
    void touchConfirmsOnlyTheBoundReplica() throws Exception {
        bind(S1, "a");

        assertThat(await(store.touch(S1, "a"))).isTrue();
        assertThat(await(store.touch(S1, "b"))).isFalse();
        assertThat(await(store.touch(S2, "a"))).isFalse();
        // A touch for the wrong replica must not create or change anything.
        assertThat(find(S1)).contains(Binding.to("a"));
        assertThat(find(S2)).isEmpty();
    }

    @Test
    void releaseKeepsRoutingTheSessionToItsReplicaButStopsCountingIt() throws Exception {
        bind(S1, "a");
        bind(S2, "a");

        await(store.release(S1, "b"));
        assertThat(find(S1)).as("a release naming another replica changes nothing").contains(Binding.to("a"));
        assertThat(count("a")).containsEntry("a", 2L);

        await(store.release(S1, "a"));
        // Late RPCs of the session (an asynchronous ReleaseExecute) must still reach replica a.
        assertThat(find(S1)).contains(Binding.releasedFrom("a"));
        assertThat(count("a")).containsEntry("a", 1L);
        assertThat(find(S2)).contains(Binding.to("a"));
    }

    @Test
    void findLeavesAReleasedSessionReleased() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));

        find(S1);
        find(S1);

        assertThat(find(S1)).contains(Binding.releasedFrom("a"));
        assertThat(count("a")).containsEntry("a", 0L);
    }

    @Test
    void workOnAReleasedSessionRevivesItWhereItIsNeverElsewhere() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));

        // Someone who knew the id released it; its owner's next request must find it on a, not be placed on b.
        Lookup lookup = await(store.findOrBind(S1, "b"));

        assertThat(lookup).isEqualTo(new Lookup(Binding.to("a"), false));
        assertThat(find(S1)).contains(Binding.to("a"));
        assertThat(count("a", "b")).containsEntry("a", 1L).containsEntry("b", 0L);
    }

    @Test
    void touchRevivesAReleasedSessionOnlyOnItsOwnReplica() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));

        assertThat(await(store.touch(S1, "b"))).isFalse();
        assertThat(find(S1)).contains(Binding.releasedFrom("a"));

        assertThat(await(store.touch(S1, "a"))).isTrue();
        assertThat(find(S1)).contains(Binding.to("a"));
        assertThat(count("a")).containsEntry("a", 1L);
    }

    @Test
    void releasingTwiceOrAfterTheReplicaLeftKeepsTheStrongerState() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));
        await(store.release(S1, "a"));
        assertThat(find(S1)).contains(Binding.releasedFrom("a"));

        bind(S2, "a");
        await(store.evictReplica("a"));
        await(store.release(S2, "a"));
        assertThat(find(S2)).as("a lost session stays lost").contains(Binding.lostOn("a"));
    }

    @Test
    void releasingAnUnknownSessionIsHarmless() throws Exception {
        await(store.release(S1, "a"));

        assertThat(find(S1)).isEmpty();
    }

    @Test
    void countsLiveSessionsPerReplica() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        bind(S3, "b");
        bind(S3, "a"); // lost the race: no second count

        assertThat(count("a", "b", "c")).isEqualTo(Map.of("a", 2L, "b", 1L, "c", 0L));
    }

    @Test
    void releaseLowersTheCount() throws Exception {
        bind(S1, "a");
        bind(S2, "a");

        await(store.release(S1, "a"));

        assertThat(count("a")).isEqualTo(Map.of("a", 1L));
    }

    @Test
    void countsFallToZeroOnceTheIdleTtlHasPassed() throws Exception {
        bind(S1, "a");
        bind(S2, "b");
        clock.addAndGet(IDLE.toMillis() - 1);
        assertThat(count("a", "b")).isEqualTo(Map.of("a", 1L, "b", 1L));

        clock.addAndGet(2);

        assertThat(count("a", "b")).isEqualTo(Map.of("a", 0L, "b", 0L));
    }

    Map<String, Long> recent(long windowMillis, String... replicas) throws Exception {
        return await(store.countSessions(List.of(replicas), windowMillis));
    }

    @Test
    void recentCountHoldsOnlySessionsPushedWithinTheWindow() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        bind(S3, "b");
        clock.addAndGet(40_000);
        assertThat(await(store.touch(S2, "a"))).isTrue();
        clock.addAndGet(10_000);

        // S1 and S3 were last pushed 50 s ago, S2 10 s ago; all three are live (idle TTL 60 s).
        assertThat(recent(30_000, "a", "b", "c")).isEqualTo(Map.of("a", 1L, "b", 0L, "c", 0L));
        assertThat(recent(50_001, "a", "b", "c")).isEqualTo(Map.of("a", 2L, "b", 1L, "c", 0L));
        assertThat(count("a", "b", "c")).isEqualTo(Map.of("a", 2L, "b", 1L, "c", 0L));
    }

    @Test
    void recentCountLeavesOutReleasedAndExpiredSessionsWhateverTheWindow() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        await(store.release(S2, "a"));
        assertThat(recent(IDLE.toMillis() * 10, "a")).isEqualTo(Map.of("a", 1L));

        clock.addAndGet(IDLE.toMillis() + 1);

        assertThat(recent(IDLE.toMillis() * 10, "a")).isEqualTo(Map.of("a", 0L));
    }

    @Test
    void bothCountsOfOnePollAgreeWithEachCountAlone() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        bind(S3, "b");
        bind(S4, "b");
        await(store.release(S4, "b"));
        clock.addAndGet(40_000);
        assertThat(await(store.touch(S2, "a"))).isTrue();
        clock.addAndGet(10_000);

        // Live: S1 and S2 on a, S3 on b (S4 released). Pushed within 30 s: only S2 (10 s ago; the others 50 s).
        SessionStore.Counts counts = await(store.countLiveAndRecent(List.of("a", "b", "c"), 30_000));
        assertThat(counts.live()).isEqualTo(Map.of("a", 2L, "b", 1L, "c", 0L));
        assertThat(counts.recent()).isEqualTo(Map.of("a", 1L, "b", 0L, "c", 0L));

        // S1 and S3 expire (idle TTL 60 s after their push 50 s ago); S2 stays, still recent for a 30 s window.
        clock.addAndGet(IDLE.toMillis() - 50_000);
        counts = await(store.countLiveAndRecent(List.of("a", "b"), 30_000));
        assertThat(counts.live()).isEqualTo(Map.of("a", 1L, "b", 0L));
        assertThat(counts.recent()).isEqualTo(Map.of("a", 1L, "b", 0L));
    }

    @Test
    void findOrBindCreatesOnceThenReturnsTheExistingBindingAndKeepsTombstones() throws Exception {
        assertThat(await(store.findOrBind(S1, "a"))).isEqualTo(new Lookup(Binding.to("a"), true));
        assertThat(await(store.findOrBind(S1, "b"))).as("second caller gets the first binding")
                .isEqualTo(new Lookup(Binding.to("a"), false));
        assertThat(find(S1)).contains(Binding.to("a"));
        clock.addAndGet(IDLE.toMillis() - 1);
        await(store.findOrBind(S1, "b"));
        clock.addAndGet(IDLE.toMillis() - 1);
        assertThat(count("a", "b")).as("a lookup keeps the session alive and counted").isEqualTo(Map.of("a", 1L, "b", 0L));

        bind(S2, "c");
        await(store.evictReplica("c"));
        assertThat(await(store.findOrBind(S2, "a"))).isEqualTo(new Lookup(Binding.lostOn("c"), false));
    }

    @Test
    void claimReplacesALiveBindingMovesItsCountAndKeepsTombstones() throws Exception {
        bind(S1, "a");
        assertThat(await(store.claim(S1, "b"))).isEqualTo(Binding.to("b"));
        assertThat(find(S1)).contains(Binding.to("b"));
        assertThat(count("a", "b")).isEqualTo(Map.of("a", 0L, "b", 1L));

        assertThat(await(store.claim(S2, "a"))).as("claiming an unbound session binds it").isEqualTo(Binding.to("a"));

        bind(S3, "c");
        await(store.evictReplica("c"));
        assertThat(await(store.claim(S3, "a"))).as("a lost session stays lost").isEqualTo(Binding.lostOn("c"));
    }

    @Test
    void lookupKeepsASessionCountedLikeATouch() throws Exception {
        // Regression: the Redis store refreshed the key on lookup but not the session's score in its
        // replica's index, so a session kept alive by lookups dropped out of the count.
        bind(S1, "a");
        clock.addAndGet(IDLE.toMillis() - 1);
        assertThat(find(S1)).contains(Binding.to("a"));

        clock.addAndGet(IDLE.toMillis() - 1);

        assertThat(count("a")).isEqualTo(Map.of("a", 1L));
    }

    @Test
    void touchKeepsASessionCounted() throws Exception {
        bind(S1, "a");
        clock.addAndGet(IDLE.toMillis() - 1);
        assertThat(await(store.touch(S1, "a"))).isTrue();

        clock.addAndGet(IDLE.toMillis() - 1);

        // Two idle periods after the bind, but only one minus a millisecond after the touch.
        assertThat(count("a")).isEqualTo(Map.of("a", 1L));
    }

    @Test
    void evictReplicaMarksItsSessionsLostAndLeavesOthersAlone() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        bind(S3, "b");

        assertThat(await(store.evictReplica("a"))).isEqualTo(2L);

        assertThat(find(S1)).contains(Binding.lostOn("a"));
        assertThat(find(S2)).contains(Binding.lostOn("a"));
        assertThat(find(S3)).contains(Binding.to("b"));
        assertThat(count("a", "b")).isEqualTo(Map.of("a", 0L, "b", 1L));
    }

    @Test
    void lostSessionIsNotSilentlyRePlaced() throws Exception {
        bind(S1, "a");
        await(store.evictReplica("a"));

        // A new router that has never seen S1 must get the tombstone, not a fresh binding elsewhere.
        assertThat(bind(S1, "b")).isEqualTo(Binding.lostOn("a"));
        assertThat(await(store.touch(S1, "a"))).isFalse();
        await(store.release(S1, "a"));
        assertThat(find(S1)).contains(Binding.lostOn("a"));
    }

    @Test
    void evictionIsIdempotent() throws Exception {
        bind(S1, "a");
        await(store.evictReplica("a"));

        assertThat(await(store.evictReplica("a"))).isZero();
        assertThat(await(store.evictReplica("never-there"))).isZero();
        assertThat(find(S1)).contains(Binding.lostOn("a"));
    }

    @Test
    void replicaThatReturnsAfterEvictionStartsFromZero() throws Exception {
        // bind() returns once S1 is indexed: an eviction marks the sessions its replica's index lists.
        bind(S1, "a");
        await(store.evictReplica("a"));

        bind(S2, "a");

        assertThat(count("a")).isEqualTo(Map.of("a", 1L));
        assertThat(find(S1)).contains(Binding.lostOn("a"));
    }
}
