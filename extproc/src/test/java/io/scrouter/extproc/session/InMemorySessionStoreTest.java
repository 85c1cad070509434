package io.scrouter.extproc.session;

import io.scrouter.extproc.session.SessionTtls;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The embedded store, with every expiry driven by a fake clock: it must honour the idle TTL exactly as the
 * Redis store does with native key expiry.
 */
class InMemorySessionStoreTest extends SessionStoreContract {

    private InMemorySessionStore memory;

    @Override
    protected SessionStore createStore(Duration idleTtl, Duration lostTtl, LongSupplier clock) {
        memory = new InMemorySessionStore(new SessionTtls(idleTtl, lostTtl, RELEASE_GRACE), clock);
        return memory;
    }

    @Test
    void sessionUsedMoreOftenThanTheTtlNeverExpires() throws Exception {
        bind(S1, "a");

        // Ten lookups, each just inside the idle TTL: ten TTLs have passed since the bind.
        for (int i = 0; i < 10; i++) {
            clock.addAndGet(IDLE.toMillis() - 1);
            assertThat(find(S1)).as("lookup %d", i).contains(Binding.to("a"));
        }
    }

    @Test
    void sessionIdleForTheTtlExpires() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        clock.addAndGet(IDLE.toMillis() - 1);
        assertThat(find(S1)).contains(Binding.to("a"));

        clock.addAndGet(1);

        // S2 has been idle for exactly the TTL; S1 was refreshed a millisecond ago.
        assertThat(find(S2)).isEmpty();
        assertThat(find(S1)).contains(Binding.to("a"));
    }

    @Test
    void expiredSessionCanBeBoundAfresh() throws Exception {
        bind(S1, "a");
        clock.addAndGet(IDLE.toMillis());

        assertThat(bind(S1, "b")).isEqualTo(Binding.to("b"));
        assertThat(find(S1)).contains(Binding.to("b"));
    }

    @Test
    void touchRefreshesExpiryOnlyForTheBoundReplica() throws Exception {
        bind(S1, "a");
        bind(S2, "a");
        clock.addAndGet(IDLE.toMillis() - 1);

        assertThat(await(store.touch(S1, "a"))).isTrue();
        assertThat(await(store.touch(S2, "b"))).isFalse();
        clock.addAndGet(1);

        assertThat(find(S1)).contains(Binding.to("a"));
        assertThat(find(S2)).isEmpty();
    }

    @Test
    void touchOfAnExpiredSessionIsFalseAndDoesNotRevive() throws Exception {
        bind(S1, "a");
        clock.addAndGet(IDLE.toMillis());

        assertThat(await(store.touch(S1, "a"))).isFalse();
        assertThat(find(S1)).isEmpty();
    }

    @Test
    void releasedSessionRoutesForTheGraceThenIsGone() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));

        clock.addAndGet(RELEASE_GRACE.toMillis() - 1);
        assertThat(find(S1)).contains(Binding.releasedFrom("a"));
        clock.addAndGet(1);
        assertThat(find(S1)).isEmpty();
    }

    @Test
    void revivedSessionGetsTheFullIdleTtlBack() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));
        clock.addAndGet(RELEASE_GRACE.toMillis() - 1);

        await(store.touch(S1, "a"));
        clock.addAndGet(IDLE.toMillis() - 1);

        assertThat(await(store.countSessions(java.util.List.of("a")))).containsEntry("a", 1L);
        assertThat(find(S1)).contains(Binding.to("a"));
    }

    @Test
    void countingSweepsExpiredBindingsFromMemory() throws Exception {
        bind(S1, "a");
        bind(S2, "b");
        clock.addAndGet(IDLE.toMillis() / 2);
        bind(S3, "a");
        assertThat(memory.size()).isEqualTo(3);

        clock.addAndGet(IDLE.toMillis() / 2);

        assertThat(count("a", "b")).isEqualTo(Map.of("a", 1L, "b", 0L));
        assertThat(memory.size()).isEqualTo(1);
    }

    @Test
    void thePollsCountSweepsExpiredBindingsOfEveryReplica() throws Exception {
        bind(S1, "a");
        bind(S2, "b");
        clock.addAndGet(IDLE.toMillis() / 2);
        bind(S3, "a");

        clock.addAndGet(IDLE.toMillis() / 2);
        SessionStore.Counts counts = await(store.countLiveAndRecent(java.util.List.of("a"), IDLE.toMillis()));

        assertThat(counts.live()).isEqualTo(Map.of("a", 1L));
        assertThat(memory.size()).as("S2, on a replica not asked about, expired too").isEqualTo(1);
    }

    @Test
    void countsOnlyTheReplicasAskedFor() throws Exception {
        bind(S1, "a");
        bind(S2, "b");

        assertThat(count("a")).isEqualTo(Map.of("a", 1L));
    }

    @Test
    void lostBindingLastsTheLostTtlThenIsGone() throws Exception {
        bind(S1, "a");
        clock.addAndGet(10);
        await(store.evictReplica("a"));

        // Looking at a tombstone must not extend it: it ends lostTtl after the eviction.
        clock.addAndGet(LOST.toMillis() / 2);
        assertThat(find(S1)).contains(Binding.lostOn("a"));
        clock.addAndGet(LOST.toMillis() / 2 - 1);
        assertThat(find(S1)).contains(Binding.lostOn("a"));

        clock.addAndGet(1);

        assertThat(find(S1)).isEmpty();
        assertThat(bind(S1, "b")).isEqualTo(Binding.to("b"));
    }

    @Test
    void lostBindingOutlivesTheIdleTtl() throws Exception {
        // lostTtl (120 s) is longer than idleTtl (60 s): the clear error keeps coming after the idle TTL.
        bind(S1, "a");
        await(store.evictReplica("a"));

        clock.addAndGet(IDLE.toMillis() + 1);

        assertThat(find(S1)).contains(Binding.lostOn("a"));
    }

    @Test
    void evictionDoesNotResurrectExpiredSessions() throws Exception {
        bind(S1, "a");
        clock.addAndGet(IDLE.toMillis());

        assertThat(await(store.evictReplica("a"))).isZero();
        assertThat(find(S1)).isEmpty();
    }
}
