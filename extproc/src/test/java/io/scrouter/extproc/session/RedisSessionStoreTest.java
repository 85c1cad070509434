package io.scrouter.extproc.session;

import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.redis.RedisSessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shared store against a real {@code redis-server}: the same contract as the in-memory store, plus what
 * only Redis can show: atomic first-wins binding across clients, native key expiry, the documented key
 * schema, and compare-and-set scripts.
 */
class RedisSessionStoreTest extends SessionStoreContract {

    private static final String PREFIX = "sst";
    private static final RedisKeys KEYS = new RedisKeys(PREFIX);

    private static RedisProcess redis;
    private static RedissonClient client;
    private static RedissonClient secondClient;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisProcess.start();
        client = connect();
        secondClient = connect();
    }

    private static RedissonClient connect() {
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address()).setConnectionPoolSize(64);
        return Redisson.create(c);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        client.shutdown();
        secondClient.shutdown();
        redis.close();
    }

    @Override
    protected SessionStore createStore(Duration idleTtl, Duration lostTtl, LongSupplier clock) throws Exception {
        assertThat(redis.command("FLUSHALL")).isEqualTo("+OK");
        return new RedisSessionStore(client, KEYS, new SessionTtls(idleTtl, lostTtl, RELEASE_GRACE), clock);
    }

    @Override
    protected void awaitIndexed(String session, String replica) {
        Await.untilChecked("session " + session + " in replica " + replica + "'s index", STORE_CALL,
                () -> !redis.command("ZSCORE", KEYS.replicaSessions(replica), session).equals("$-1"));
    }

    private static long pttl(String key) throws IOException {
        String reply = redis.command("PTTL", key);
        assertThat(reply).startsWith(":");
        return Long.parseLong(reply.substring(1));
    }

    private static String get(String key) throws IOException {
        return redis.command("GET", key);
    }

    @Test
    void bindingIsOneKeyHoldingTheReplicaIdWithTheIdleTtl() throws Exception {
        bind(S1, "a");

        assertThat(get(PREFIX + ":session:" + S1)).isEqualTo("a");
        assertThat(pttl(PREFIX + ":session:" + S1)).isPositive().isLessThanOrEqualTo(IDLE.toMillis());
        // The replica's index scores the session with its expiry on the injected clock.
        assertThat(redis.command("ZSCORE", PREFIX + ":replica-sessions:a", S1))
                .isEqualTo(Long.toString(clock.get() + IDLE.toMillis()));
    }

    @Test
    void findRefreshesTheKeyTtl() throws Exception {
        bind(S1, "a");
        String key = KEYS.session(S1);
        // Shorten the TTL by hand, as if most of the idle period had passed.
        assertThat(redis.command("PEXPIRE", key, "5000")).isEqualTo(":1");

        assertThat(find(S1)).contains(Binding.to("a"));

        assertThat(pttl(key)).isGreaterThan(5_000).isLessThanOrEqualTo(IDLE.toMillis());
    }

    @Test
    void touchRefreshesTheKeyTtlAndTheIndexScore() throws Exception {
        bind(S1, "a");
        String key = KEYS.session(S1);
        redis.command("PEXPIRE", key, "5000");
        clock.addAndGet(30_000);

        assertThat(await(store.touch(S1, "a"))).isTrue();

        assertThat(pttl(key)).isGreaterThan(5_000).isLessThanOrEqualTo(IDLE.toMillis());
        // The index write follows in the next batch of index writes; the touch does not wait for it.
        awaitScore(S1, "a", clock.get() + IDLE.toMillis());
    }

    @Test
    void findMovesTheIndexScoreWithTheKeyTtl() throws Exception {
        bind(S1, "a");
        clock.addAndGet(30_000);

        assertThat(find(S1)).contains(Binding.to("a"));

        awaitScore(S1, "a", clock.get() + IDLE.toMillis());
    }

    private static void awaitScore(String session, String replica, long score) {
        Await.untilChecked("session " + session + " scored " + score + " in replica " + replica + "'s index",
                STORE_CALL, () -> redis.command("ZSCORE", KEYS.replicaSessions(replica), session)
                        .equals(Long.toString(score)));
    }

    @Test
    void touchForAnotherReplicaLeavesTheTtlAlone() throws Exception {
        bind(S1, "a");
        String key = KEYS.session(S1);
        redis.command("PEXPIRE", key, "5000");

        assertThat(await(store.touch(S1, "b"))).isFalse();

        assertThat(pttl(key)).isLessThanOrEqualTo(5_000);
        assertThat(redis.command("EXISTS", KEYS.replicaSessions("b"))).isEqualTo(":0");
    }

    @Test
    void touchIsFalseOnceTheKeyIsGone() throws Exception {
        bind(S1, "a");
        // Redis flushed or failed over without the key: the router must learn it and write its binding back.
        assertThat(redis.command("DEL", KEYS.session(S1))).isEqualTo(":1");

        assertThat(await(store.touch(S1, "a"))).isFalse();
        assertThat(redis.command("EXISTS", KEYS.session(S1))).isEqualTo(":0");
    }

    @Test
    void keyExpiresNativelyAfterTheIdleTtl() throws Exception {
        SessionStore shortLived = new RedisSessionStore(client, KEYS, new SessionTtls(Duration.ofMillis(300), LOST, Duration.ofMillis(300)), clock::get);
        await(shortLived.bindIfAbsent(S1, "a"));
        assertThat(redis.command("EXISTS", KEYS.session(S1))).isEqualTo(":1");

        // EXISTS does not refresh the TTL (find() would), so the key is left to expire on its own.
        Await.untilChecked("the idle session key to expire", Patience.of(Duration.ofMillis(300)),
                () -> redis.command("EXISTS", KEYS.session(S1)).equals(":0"));
        assertThat(find(S1)).isEmpty();
    }

    @Test
    void releaseIsCompareAndSet() throws Exception {
        bind(S1, "a");
        // Another router re-bound the session meanwhile (simulated by hand): an old release must not touch it.
        assertThat(redis.command("SET", KEYS.session(S1), "b")).isEqualTo("+OK");

        await(store.release(S1, "a"));

        assertThat(get(KEYS.session(S1))).isEqualTo("b");
    }

    @Test
    void releasedKeyNamesItsReplicaAndExpiresAfterTheGraceNotTheIdleTtl() throws Exception {
        bind(S1, "a");

        await(store.release(S1, "a"));

        assertThat(get(KEYS.session(S1))).isEqualTo("!released:a");
        assertThat(pttl(KEYS.session(S1))).isPositive().isLessThanOrEqualTo(RELEASE_GRACE.toMillis());
        // A clean-up call reading it (find) leaves the grace as it is.
        find(S1);
        assertThat(pttl(KEYS.session(S1))).isLessThanOrEqualTo(RELEASE_GRACE.toMillis());
    }

    @Test
    void revivedKeyGetsTheIdleTtlAndItsIndexEntryBack() throws Exception {
        bind(S1, "a");
        await(store.release(S1, "a"));

        await(store.findOrBind(S1, "b"));

        assertThat(get(KEYS.session(S1))).isEqualTo("a");
        assertThat(pttl(KEYS.session(S1))).isGreaterThan(RELEASE_GRACE.toMillis());
        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("a"), S1)).isNotEqualTo("$-1");
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("b"))).isEqualTo(":0");
    }

    @Test
    void releaseRemovesTheSessionFromTheReplicaIndex() throws Exception {
        bind(S1, "a");
        bind(S2, "a");

        await(store.release(S1, "a"));

        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("a"), S1)).isEqualTo("$-1");
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).isEqualTo(":1");
    }

    @Test
    void countingTrimsExpiredMembersFromTheIndex() throws Exception {
        bind(S1, "a");
        clock.addAndGet(IDLE.toMillis() / 2);
        bind(S2, "a");
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).isEqualTo(":2");

        clock.addAndGet(IDLE.toMillis() / 2);

        assertThat(count("a")).isEqualTo(Map.of("a", 1L));
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).isEqualTo(":1");
        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("a"), S2)).isNotEqualTo("$-1");
    }

    @Test
    void countOfNoReplicasIsEmpty() throws Exception {
        assertThat(count()).isEmpty();
    }

    @Test
    void evictReplicaWritesTombstonesWithTheLostTtlAndDropsTheIndex() throws Exception {
        bind(S1, "a");
        bind(S2, "b");
        String otherKey = KEYS.session(S2);
        redis.command("PEXPIRE", otherKey, "5000");

        assertThat(await(store.evictReplica("a"))).isEqualTo(1L);

        assertThat(get(KEYS.session(S1))).isEqualTo("!lost:a");
        long lostTtl = pttl(KEYS.session(S1));
        assertThat(lostTtl).isGreaterThan(IDLE.toMillis()).isLessThanOrEqualTo(LOST.toMillis());
        assertThat(redis.command("EXISTS", KEYS.replicaSessions("a"))).isEqualTo(":0");
        // The other replica's session: same value, TTL not touched, index intact.
        assertThat(get(otherKey)).isEqualTo("b");
        assertThat(pttl(otherKey)).isLessThanOrEqualTo(5_000);
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("b"))).isEqualTo(":1");
    }

    @Test
    void evictDoesNotTombstoneASessionThatMovedToAnotherReplica() throws Exception {
        bind(S1, "a");
        // Released and re-bound elsewhere, while a's index still lists it until the next count trims it.
        assertThat(redis.command("SET", KEYS.session(S1), "b")).isEqualTo("+OK");

        assertThat(await(store.evictReplica("a"))).isZero();

        assertThat(get(KEYS.session(S1))).isEqualTo("b");
    }

    @Test
    void evictingAReplicaWithManyPagesOfSessionsMarksEveryOneOfItsDriversAndNoOther() throws Exception {
        // Four pages' worth, a third of them bound elsewhere since: those stay in the index, so every page after
        // the first starts behind the ones kept, and a page that skipped them would leave sessions unmarked.
        int sessions = 4 * RedisSessionStore.EVICTION_PAGE;
        List<String> ids = new ArrayList<>();
        List<CompletableFuture<?>> bound = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            ids.add(UUID.randomUUID().toString());
            bound.add(store.bindIfAbsent(ids.get(i), "a"));
        }
        await(CompletableFuture.allOf(bound.toArray(new CompletableFuture[0])));
        int moved = 0;
        for (int i = 0; i < sessions; i += 3) {
            assertThat(redis.command("SET", KEYS.session(ids.get(i)), "b")).isEqualTo("+OK");
            moved++;
        }

        assertThat(await(store.evictReplica("a"))).isEqualTo(sessions - moved);

        for (int i = 0; i < sessions; i++) {
            assertThat(get(KEYS.session(ids.get(i)))).as("session %d", i).isEqualTo(i % 3 == 0 ? "b" : "!lost:a");
        }
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).as("the moved sessions stay listed until "
                + "a count trims them").isEqualTo(":" + moved);
    }

    @Test
    void aNewSessionIsBoundByOneSetWithoutTheScript() throws Exception {
        // A new session's one round trip is a native SET NX PX. The find-or-bind script starts with a GET (and
        // Redis counts a script's GETs and SETs under its own names), so a GET here means the script ran.
        Map<String, Long> before = redis.commandCalls();

        assertThat(await(store.findOrBind(S1, "a"))).isEqualTo(new Lookup(Binding.to("a"), true));

        Map<String, Long> after = redis.commandCalls();
        assertThat(after.getOrDefault("set", 0L) - before.getOrDefault("set", 0L)).as("SETs").isEqualTo(1);
        assertThat(after.getOrDefault("get", 0L) - before.getOrDefault("get", 0L)).as("GETs").isZero();
        assertThat(get(KEYS.session(S1))).isEqualTo("a");
        assertThat(pttl(KEYS.session(S1))).isPositive().isLessThanOrEqualTo(IDLE.toMillis());
        awaitIndexed(S1, "a");
    }

    @Test
    void aSessionAnotherRouterBoundIsReadAndItsExpiryPushedBackNotOverwritten() throws Exception {
        SessionStore other = new RedisSessionStore(secondClient, KEYS, new SessionTtls(IDLE, LOST, IDLE), clock::get);
        await(other.findOrBind(S1, "a"));
        // Most of the idle period gone by the time this router first sees the session.
        assertThat(redis.command("PEXPIRE", KEYS.session(S1), "5000")).isEqualTo(":1");

        assertThat(await(store.findOrBind(S1, "b"))).isEqualTo(new Lookup(Binding.to("a"), false));

        assertThat(get(KEYS.session(S1))).isEqualTo("a");
        assertThat(pttl(KEYS.session(S1))).isGreaterThan(IDLE.toMillis() / 2).isLessThanOrEqualTo(IDLE.toMillis());
    }

    @Test
    void concurrentBindersOfANewSessionAllGetTheSameBinding() throws Exception {
        // Two store instances on two separate Redis clients stand for two routers.
        SessionStore first = store;
        SessionStore second = new RedisSessionStore(secondClient, KEYS, new SessionTtls(IDLE, LOST, IDLE), clock::get);
        int threads = 32;
        int sessions = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        int disagreements = 0;
        try {
            for (int s = 0; s < sessions; s++) {
                String session = UUID.randomUUID().toString();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Binding>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    SessionStore router = t % 2 == 0 ? first : second;
                    String candidate = "r" + t;
                    results.add(pool.submit(() -> {
                        go.await();
                        return router.bindIfAbsent(session, candidate).get(10, TimeUnit.SECONDS);
                    }));
                }
                go.countDown();
                Set<Binding> seen = new HashSet<>();
                for (Future<Binding> f : results) {
                    seen.add(f.get(20, TimeUnit.SECONDS));
                }
                Binding stored = Binding.decode(get(KEYS.session(session)));
                if (seen.size() != 1 || !seen.contains(stored)) {
                    disagreements++;
                }
                // Exactly one binder indexed the session under its replica.
                assertThat(redis.command("ZSCORE", KEYS.replicaSessions(stored.replicaId()), session))
                        .isNotEqualTo("$-1");
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(disagreements).isZero();
        long indexed = 0;
        for (int t = 0; t < threads; t++) {
            indexed += Long.parseLong(redis.command("ZCARD", KEYS.replicaSessions("r" + t)).substring(1));
        }
        assertThat(indexed).isEqualTo(sessions);
    }

    @Test
    void callsDoNotBlockTheCaller() throws Exception {
        // The request path must never wait on Redis: every call hands back a future at once.
        bind(S1, "a");
        CompletableFuture<Optional<Binding>> pending;
        redis.pause();
        try {
            pending = store.find(S1);
            assertThat(pending).isNotDone();
        } finally {
            redis.resume();
        }
        // Once Redis answers again, the same call completes normally.
        assertThat(pending.get(10, TimeUnit.SECONDS)).contains(Binding.to("a"));
    }

    @Test
    void lookingUpALostSessionDoesNotStretchItsTombstone() throws Exception {
        // Regression: GETEX refreshed every key it read, so the first lookup after eviction cut a one-hour
        // tombstone to the idle TTL (or, with a short lost-TTL, extended it on every retry).
        SessionStore s = new RedisSessionStore(client, KEYS, new SessionTtls(Duration.ofSeconds(60), Duration.ofSeconds(3600), Duration.ofSeconds(60)),
                clock::get);
        String session = UUID.randomUUID().toString();
        await(s.bindIfAbsent(session, "gone"));
        assertThat(await(s.evictReplica("gone"))).isEqualTo(1L);
        long before = pttl(KEYS.session(session));
        assertThat(before).isGreaterThan(3_500_000L);

        assertThat(await(s.find(session))).contains(Binding.lostOn("gone"));

        assertThat(pttl(KEYS.session(session))).isGreaterThan(3_500_000L).isLessThanOrEqualTo(before);
    }

    @Test
    void lookupOfALiveSessionPushesItsExpiryBackToTheIdleTtl() throws Exception {
        SessionStore s = new RedisSessionStore(client, KEYS, new SessionTtls(Duration.ofSeconds(60), Duration.ofSeconds(3600), Duration.ofSeconds(60)),
                clock::get);
        String session = UUID.randomUUID().toString();
        await(s.bindIfAbsent(session, "a"));
        assertThat(redis.command("PEXPIRE", KEYS.session(session), "5000")).isEqualTo(":1");

        assertThat(await(s.find(session))).contains(Binding.to("a"));

        assertThat(pttl(KEYS.session(session))).isGreaterThan(50_000L);
    }

    @Test
    void epochIsStableUntilRedisLosesItsData() throws Exception {
        SessionStore s = new RedisSessionStore(client, KEYS, new SessionTtls(Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofSeconds(60)), clock::get);
        SessionStore other = new RedisSessionStore(secondClient, KEYS, new SessionTtls(Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofSeconds(60)),
                clock::get);
        String first = await(s.epoch());
        assertThat(await(other.epoch())).as("every router reads the same data set").isEqualTo(first);
        assertThat(await(s.epoch())).isEqualTo(first);

        assertThat(redis.command("FLUSHALL")).isEqualTo("+OK");   // as a restart without persistence would

        String after = await(other.epoch());
        assertThat(after).isNotEqualTo(first);
        assertThat(await(s.epoch())).isEqualTo(after);
    }
}
