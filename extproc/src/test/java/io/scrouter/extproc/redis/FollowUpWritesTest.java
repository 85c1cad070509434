package io.scrouter.extproc.redis;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writes that follow bindings, against a real {@code redis-server}: what is added before the loop turns goes
 * out as one batch with one ZADD per replica, the feed keeps one entry per new binding, a stopped loop loses
 * its pending writes without failing the decision that added them, and whoever reads or trims an index sees
 * every write queued before it and none queued after it.
 */
class FollowUpWritesTest {

    private static final RedisKeys KEYS = new RedisKeys("fuw");
    /** One batch's round trip on loopback, with room for a busy machine. */
    private static final Duration BATCH = Patience.of(Duration.ofSeconds(3));

    private static RedisProcess redis;
    private static RedissonClient client;

    /** The event loop's task queue, run by hand: tasks wait until the test turns the loop. */
    private final List<Runnable> loop = new ArrayList<>();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        client = Redisson.create(c);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        client.shutdown();
        redis.close();
    }

    @BeforeEach
    void emptyRedis() throws IOException {
        assertThat(redis.command("FLUSHALL")).isEqualTo("+OK");
        assertThat(redis.command("CONFIG", "RESETSTAT")).isEqualTo("+OK");
    }

    @Test
    void writesAddedInOneTurnOfTheLoopGoOutAsOneBatchWithOneZaddPerReplica() throws Exception {
        FollowUpWrites writes = new FollowUpWrites(client, KEYS, loop::add);

        writes.add("s1", "a", 1000, "a@d1");
        writes.add("s2", "a", 2000, null);
        writes.add("s3", "b", 3000, "b@d2");

        assertThat(loop).as("one flush scheduled for three writes").hasSize(1);
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).as("nothing sent before the loop turns")
                .isEqualTo(":0");
        turnLoop();

        Await.untilChecked("both indexes written", BATCH, () ->
                redis.command("ZCARD", KEYS.replicaSessions("a")).equals(":2")
                        && redis.command("ZCARD", KEYS.replicaSessions("b")).equals(":1"));
        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("a"), "s1")).isEqualTo("1000");
        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("a"), "s2")).isEqualTo("2000");
        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("b"), "s3")).isEqualTo("3000");
        assertThat(redis.command("XLEN", KEYS.bindingFeed())).as("one feed entry per new binding").isEqualTo(":2");
        assertThat(calls("zadd")).as("one ZADD per replica, not per session").isEqualTo(2);
        assertThat(loop).as("nothing left to flush").isEmpty();
    }

    /**
     * {@code redis.followUpGather} as configured, both sides of it: a write a fifth of the window after the first goes
     * with it; a write a fifth of the window after the window closed goes in a batch of its own. Netty runs timers
     * in deadline order, so however late a busy loop runs them, each lands on its side of the batch.
     */
    @ParameterizedTest(name = "window {0} ms")
    @ValueSource(ints = {1, 5})
    void aRoutersStoreGathersWritesAddedWithinItsWindowIntoOneBatchAndNoLater(int windowMillis) throws Exception {
        Duration window = Duration.ofMillis(windowMillis);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            EventLoop eventLoop = group.next();
            FollowUpWrites writes = new FollowUpWrites(client, KEYS, eventLoop, FollowUpWrites.gathered(eventLoop,
                    window));
            long scriptsBefore = calls("eval") + calls("evalsha");

            long fifth = window.toNanos() / 5;
            eventLoop.execute(() -> {
                writes.add("s1", "a", 1000, "a@d1");
                eventLoop.schedule(() -> writes.add("s2", "b", 2000, "b@d2"), fifth, TimeUnit.NANOSECONDS);
            });

            Await.untilChecked("both indexes written", BATCH, () ->
                    redis.command("ZCARD", KEYS.replicaSessions("a")).equals(":1")
                            && redis.command("ZCARD", KEYS.replicaSessions("b")).equals(":1"));
            assertThat(calls("eval") + calls("evalsha") - scriptsBefore)
                    .as("one script call for writes added in two turns of the loop").isEqualTo(1);
            assertThat(redis.command("XLEN", KEYS.bindingFeed())).isEqualTo(":2");

            eventLoop.execute(() -> {
                writes.add("s3", "a", 3000, "a@d1");
                eventLoop.schedule(() -> writes.add("s4", "b", 4000, "b@d2"), window.toNanos() + fifth,
                        TimeUnit.NANOSECONDS);
            });
            Await.untilChecked("the later writes in both indexes", BATCH, () ->
                    redis.command("ZCARD", KEYS.replicaSessions("a")).equals(":2")
                            && redis.command("ZCARD", KEYS.replicaSessions("b")).equals(":2"));
            assertThat(calls("eval") + calls("evalsha") - scriptsBefore)
                    .as("a write added after the window closed waits for no longer batch: it goes in its own")
                    .isEqualTo(3);
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void withNoWindowEachTurnOfTheLoopSendsWhatItGathered() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            EventLoop eventLoop = group.next();
            FollowUpWrites writes = new FollowUpWrites(client, KEYS, eventLoop, FollowUpWrites.gathered(eventLoop,
                    Duration.ZERO));
            long scriptsBefore = calls("eval") + calls("evalsha");

            eventLoop.execute(() -> {
                writes.add("s1", "a", 1000, "a@d1");
                writes.add("s2", "b", 2000, "b@d2");
                // Queued behind the flush the first write scheduled: the next turn's batch.
                eventLoop.execute(() -> writes.add("s3", "b", 3000, "b@d3"));
            });

            Await.untilChecked("all three writes in the indexes", BATCH, () ->
                    redis.command("ZCARD", KEYS.replicaSessions("a")).equals(":1")
                            && redis.command("ZCARD", KEYS.replicaSessions("b")).equals(":2"));
            assertThat(calls("eval") + calls("evalsha") - scriptsBefore)
                    .as("one script call for the first turn's two writes, one for the next turn's").isEqualTo(2);
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aReadDoesNotWaitForTheGatheringAndTakesTheWritesQueuedBeforeItAlong() throws Exception {
        List<Runnable> gathering = new ArrayList<>();
        FollowUpWrites writes = new FollowUpWrites(client, KEYS, loop::add, gathering::add);

        writes.add("s1", "a", 1000, "a@d1");
        writes.add("s2", "a", 2000, null);
        assertThat(gathering).as("one gathered flush for both writes").hasSize(1);
        assertThat(loop).as("nothing sent at once").isEmpty();

        CompletableFuture<Void> answered = writes.answered();
        turnLoop();

        answered.get(BATCH.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a")))
                .as("the writes queued before the read went out with it, the gathering not over").isEqualTo(":2");
        long scriptsBefore = calls("eval") + calls("evalsha");
        gathering.remove(0).run();
        assertThat(calls("eval") + calls("evalsha")).as("the gathered flush finds nothing left to send")
                .isEqualTo(scriptsBefore);

        writes.add("s3", "b", 3000, "b@d2");
        assertThat(gathering).as("a write after the gathered flush ran starts the next gathering").hasSize(1);
        gathering.remove(0).run();
        Await.untilChecked("the later write sent", BATCH,
                () -> redis.command("ZCARD", KEYS.replicaSessions("b")).equals(":1"));
    }

    @Test
    void aBatchIsOneScriptCallAndOtherRoutersReadItsAnnouncementsFromTheChannelAndFromTheStream() throws Exception {
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        RedissonClient otherRouter = Redisson.create(c);
        try {
            Queue<String> live = new ConcurrentLinkedQueue<>();
            new RedisBindingFeed(otherRouter, KEYS).catchUp((session, replica) -> live.add(session + " -> " + replica));
            Await.untilChecked("the other router subscribed", BATCH,
                    () -> client.getTopic(KEYS.bindingChannel()).countSubscribers() == 1);
            FollowUpWrites writes = new FollowUpWrites(client, KEYS, loop::add);
            // Loaded as a router's store loads its scripts at start, so that a call is one EVALSHA.
            client.getScript(StringCodec.INSTANCE).scriptLoad(SessionScripts.FOLLOW_UP);

            // Counted from here: subscribing and counting subscribers cost commands of their own.
            long scriptsBefore = calls("eval") + calls("evalsha");
            writes.add("s1", "a", 1000, "a@d1");
            writes.add("s2", "a", 2000, null);
            writes.add("s3", "b", 3000, "b@d2");
            turnLoop();

            // No catch-up since the subscription: these came on the channel.
            Await.untilChecked("both announcements heard on the channel", BATCH, () -> live.size() == 2);
            assertThat(live).containsExactly("s1 -> a@d1", "s3 -> b@d2");
            assertThat(client.<String, String>getStream(KEYS.bindingFeed(), StringCodec.INSTANCE)
                    .range(StreamMessageId.MIN, StreamMessageId.MAX).values())
                    .as("the stream holds one entry per announcement, in the field routers read")
                    .containsExactly(Map.of("b", "s1 a@d1"), Map.of("b", "s3 b@d2"));
            // A router that starts now has missed the channel: it reads the same two from the stream.
            Queue<String> late = new ConcurrentLinkedQueue<>();
            new RedisBindingFeed(otherRouter, KEYS).catchUp((session, replica) -> late.add(session + " -> " + replica));
            Await.untilChecked("both announcements read from the stream", BATCH, () -> late.size() >= 2);
            assertThat(late).startsWith("s1 -> a@d1", "s3 -> b@d2");
            assertThat(calls("eval") + calls("evalsha") - scriptsBefore).as("one script call for the batch").isEqualTo(1);
            assertThat(calls("xadd")).as("one append per announcement, inside that call").isEqualTo(2);
            assertThat(calls("publish")).as("one message for the batch, inside that call").isEqualTo(1);
        } finally {
            otherRouter.shutdown();
        }
    }

    @Test
    void aFullBatchPackedInAFewArgumentsWritesEveryScoreAndAnnouncement() throws Exception {
        FollowUpWrites writes = new FollowUpWrites(client, KEYS, loop::add);
        client.getScript(StringCodec.INSTANCE).scriptLoad(SessionScripts.FOLLOW_UP);
        long scriptsBefore = calls("eval") + calls("evalsha");

        // As many writes as one batch takes, over two replicas, with fractional and whole scores; every other one new.
        int count = FollowUpWrites.MAX_PER_BATCH;
        for (int i = 0; i < count; i++) {
            String session = new UUID(7, i).toString();
            String replica = i % 2 == 0 ? "a" : "b.replica-2";
            writes.add(session, replica, i % 3 == 0 ? 1_000.5 + i : 2_000 + i, i % 2 == 0 ? replica + "@d" + i : null);
        }
        turnLoop();

        Await.untilChecked("both indexes written", BATCH, () ->
                redis.command("ZCARD", KEYS.replicaSessions("a")).equals(":" + count / 2)
                        && redis.command("ZCARD", KEYS.replicaSessions("b.replica-2")).equals(":" + count / 2));
        assertThat(calls("eval") + calls("evalsha") - scriptsBefore).as("one script call for the batch").isEqualTo(1);
        for (int i : new int[] {0, 1, 2, 3, count - 2, count - 1}) {
            String replica = i % 2 == 0 ? "a" : "b.replica-2";
            double expected = i % 3 == 0 ? 1_000.5 + i : 2_000 + i;
            assertThat(Double.parseDouble(redis.command("ZSCORE", KEYS.replicaSessions(replica),
                    new UUID(7, i).toString()))).as("score of write %d", i).isEqualTo(expected);
        }
        List<Map<String, String>> entries = new ArrayList<>(client.<String, String>getStream(KEYS.bindingFeed(),
                StringCodec.INSTANCE).range(StreamMessageId.MIN, StreamMessageId.MAX).values());
        assertThat(entries).as("one stream entry per announcement, in order").hasSize(count / 2);
        assertThat(entries.get(0)).isEqualTo(Map.of("b", new UUID(7, 0) + " a@d0"));
        assertThat(entries.get(count / 2 - 1)).isEqualTo(Map.of("b", new UUID(7, count - 2) + " a@d" + (count - 2)));
        assertThat(calls("publish")).as("the batch's announcements published as one message").isEqualTo(1);
    }

    @Test
    void aWriteRedisRefusesDoesNotStopTheRestOfItsBatch() throws Exception {
        // Replica a's index key holds a string: Redis refuses the ZADD to it (WRONGTYPE), as it refuses writes when
        // out of memory.
        assertThat(redis.command("SET", KEYS.replicaSessions("a"), "not an index")).isEqualTo("+OK");
        FollowUpWrites writes = new FollowUpWrites(client, KEYS, loop::add);

        writes.add("s1", "a", 1000, "a@d1");
        writes.add("s2", "b", 2000, "b@d2");
        turnLoop();

        Await.untilChecked("the other replica's index written", BATCH,
                () -> redis.command("ZCARD", KEYS.replicaSessions("b")).equals(":1"));
        assertThat(redis.command("XLEN", KEYS.bindingFeed())).as("both bindings announced").isEqualTo(":2");
    }

    @Test
    void aStoppedLoopDropsWhatIsPendingWithoutFailingTheCallerAndTheNextWriteIsSentAgain() throws Exception {
        boolean[] stopped = {true};
        FollowUpWrites writes = new FollowUpWrites(client, KEYS, task -> {
            if (stopped[0]) {
                throw new RejectedExecutionException("event loop shut down");
            }
            loop.add(task);
        });

        writes.add("lost", "a", 1000, "a@d1");
        stopped[0] = false;
        writes.add("kept", "a", 2000, "a@d1");
        assertThat(loop).as("a flush is scheduled again after the refusal").hasSize(1);
        turnLoop();

        Await.untilChecked("the later write sent", BATCH,
                () -> redis.command("ZCARD", KEYS.replicaSessions("a")).equals(":1"));
        assertThat(redis.command("ZSCORE", KEYS.replicaSessions("a"), "kept")).isEqualTo("2000");
        assertThat(redis.command("XLEN", KEYS.bindingFeed())).isEqualTo(":1");
    }

    @Test
    void answeredCompletesOnlyOnceRedisHoldsEveryWriteQueuedBeforeIt() throws Exception {
        FollowUpWrites writes = new FollowUpWrites(client, KEYS, loop::add);
        writes.add("s1", "a", 1000, null);
        writes.add("s2", "b", 2000, null);

        CompletableFuture<Void> answered = writes.answered();
        assertThat(answered).as("nothing is sent before the loop turns").isNotDone();
        turnLoop();

        answered.get(BATCH.toMillis(), TimeUnit.MILLISECONDS);
        // No waiting here: the writes must already be in Redis when the future completes.
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).isEqualTo(":1");
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("b"))).isEqualTo(":1");
    }

    @Test
    void aCountStartedAfterABindingIncludesItWhileItsIndexWriteIsStillQueued() throws Exception {
        RedisSessionStore store = storeOnLoop();
        assertThat(store.findOrBind("s1", "a@d1").get(BATCH.toMillis(), TimeUnit.MILLISECONDS).created()).isTrue();
        assertThat(redis.command("ZCARD", KEYS.replicaSessions("a"))).as("the index write is still queued")
                .isEqualTo(":0");

        // The router subtracts the placements it made before a count from its own tally once the count is in;
        // a count that missed this one would let a capped group take a session over its cap.
        CompletableFuture<Map<String, Long>> all = store.countSessions(List.of("a"));
        CompletableFuture<Map<String, Long>> recent = store.countSessions(List.of("a"), 60_000);
        turnLoop();

        assertThat(all.get(BATCH.toMillis(), TimeUnit.MILLISECONDS)).containsEntry("a", 1L);
        assertThat(recent.get(BATCH.toMillis(), TimeUnit.MILLISECONDS)).containsEntry("a", 1L);
    }

    @Test
    void aCountLeavesOutABindingMadeAfterItStartedUntilTheNextCount() throws Exception {
        RedisSessionStore store = storeOnLoop();
        store.findOrBind("before", "a@d1").get(BATCH.toMillis(), TimeUnit.MILLISECONDS);
        CompletableFuture<Map<String, Long>> all = store.countSessions(List.of("a"));
        CompletableFuture<Map<String, Long>> recent = store.countSessions(List.of("a"), 60_000);
        assertThat(store.findOrBind("after", "a@d1").get(BATCH.toMillis(), TimeUnit.MILLISECONDS).created()).isTrue();

        // Both index writes and the counts go out in the same turn of the loop. The router keeps "after" in its own
        // tally, as it was placed after the count started; a count that saw it too would make the router count it
        // twice, and a capped group would refuse a session while it had room.
        turnLoop();

        assertThat(all.get(BATCH.toMillis(), TimeUnit.MILLISECONDS)).containsEntry("a", 1L);
        assertThat(recent.get(BATCH.toMillis(), TimeUnit.MILLISECONDS)).containsEntry("a", 1L);
        CompletableFuture<Map<String, Long>> next = store.countSessions(List.of("a"));
        turnLoop();
        assertThat(next.get(BATCH.toMillis(), TimeUnit.MILLISECONDS)).as("the next count has both")
                .containsEntry("a", 2L);
    }

    @Test
    void evictingAReplicaMarksLostASessionBoundToItJustBefore() throws Exception {
        RedisSessionStore store = storeOnLoop();
        store.findOrBind("s1", "a@d1").get(BATCH.toMillis(), TimeUnit.MILLISECONDS);

        CompletableFuture<Long> evicted = store.evictReplica("a@d1");
        turnLoop();

        assertThat(evicted.get(BATCH.toMillis(), TimeUnit.MILLISECONDS)).as("sessions marked lost").isEqualTo(1);
        assertThat(redis.command("GET", KEYS.session("s1"))).as("its next request is told the session is lost, "
                + "not sent to a replica that is gone").contains("!lost:");
    }

    @Test
    void aReleaseRightAfterTheBindingLeavesTheSessionOutOfItsReplicasCount() throws Exception {
        // The loop turns only once Redis shows the binding released: its ZADD comes after the release script, as
        // when a client releases a session in the same loop turn it was bound in.
        Duration minute = Duration.ofMinutes(1);
        RedisSessionStore store = new RedisSessionStore(client, KEYS, new SessionTtls(minute, minute, minute),
                System::currentTimeMillis, task -> new Thread(() -> {
                    Await.untilChecked("the binding released in Redis", BATCH,
                            () -> redis.command("GET", KEYS.session("s1")).contains("!released:"));
                    task.run();
                }).start());
        store.findOrBind("s1", "a@d1").get(BATCH.toMillis(), TimeUnit.MILLISECONDS);

        store.release("s1", "a@d1").get(2 * BATCH.toMillis(), TimeUnit.MILLISECONDS);

        assertThat(store.countSessions(List.of("a")).get(BATCH.toMillis(), TimeUnit.MILLISECONDS))
                .as("a ZREM sent ahead of its ZADD leaves the released session counted until its idle TTL")
                .containsEntry("a", 0L);
    }

    /** A Redis-backed store whose follow-up writes wait for {@link #turnLoop}. */
    private RedisSessionStore storeOnLoop() {
        Duration minute = Duration.ofMinutes(1);
        return new RedisSessionStore(client, KEYS, new SessionTtls(minute, minute, minute), System::currentTimeMillis,
                loop::add);
    }

    private void turnLoop() {
        List<Runnable> tasks = new ArrayList<>(loop);
        loop.clear();
        tasks.forEach(Runnable::run);
    }

    private static long calls(String command) {
        String stats = client.getRedisNodes(RedisNodes.SINGLE).getInstance()
                .info(RedisNode.InfoSection.COMMANDSTATS).getOrDefault("cmdstat_" + command, "calls=0,");
        Matcher m = Pattern.compile("calls=(\\d+)").matcher(stats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }
}
