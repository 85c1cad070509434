package io.scrouter.extproc.redis;

import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RBatch;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The binding feed's stream, read by a router on production's Redis client and deadline ({@code redis.timeout},
 * 50 ms) from a real {@code redis-server}: a router far behind (one that starts while the stream holds a long
 * outage's sessions, or one that stalled) catches up, and a read lost to a hung Redis does not stop the next.
 */
class RedisBindingFeedTest {

    private static final RedisKeys KEYS = new RedisKeys("feed");
    /** More than a hundred full reads: a router started after a long outage finds this many, and more. */
    private static final int BEHIND = 120_000;

    private static RedisProcess redis;
    /** Writes the stream, with room for its large batches. */
    private static RedissonClient writer;

    private RedissonClient router;
    private final ThrottledLink.Set links = new ThrottledLink.Set();
    private final Map<String, String> learned = new ConcurrentHashMap<>();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address()).setTimeout((int) Patience.of(Duration.ofSeconds(3)).toMillis());
        writer = Redisson.create(c);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        writer.shutdown();
        redis.close();
    }

    @BeforeEach
    void emptyRedis() throws IOException {
        assertThat(redis.command("FLUSHALL")).isEqualTo("+OK");
    }

    @AfterEach
    void stopRouterClient() {
        if (router != null) {
            router.shutdown();
        }
        links.close();
    }

    @Test
    void aRouterFarBehindCatchesUpOnProductionsDeadline() throws Exception {
        announce(BEHIND);
        // The router reaches Redis over a link of 8 MB/s, as from another zone: a reply's size decides whether
        // it can arrive within the deadline, and no machine is fast enough to hide a reply that is too large.
        ThrottledLink link = links.open(redis.port(), 8_000_000);
        RouterConfig config = ConfigLoader.parse("redis: {address: \"redis://127.0.0.1:" + link.port() + "\"}",
                Map.of());
        assertThat(config.redis().orElseThrow().timeout()).as("production's deadline").isEqualTo(Duration.ofMillis(50));
        router = RedisClients.create(config.redis().orElseThrow());
        RedisBindingFeed feed = new RedisBindingFeed(router, KEYS);

        // One catch-up per pool poll, as the router's maintenance runs it. Each read of the stream must finish
        // within the deadline; one that cannot is thrown away and read again from the same position, forever.
        // The bound allows a whole deadline for every thousand entries, far more than decoding them takes.
        Duration poll = config.pool().pollInterval();
        Duration bound = Patience.of(config.redis().orElseThrow().timeout().multipliedBy(BEHIND / 1000).plus(poll));
        Await.until("the router learned all " + BEHIND + " announced bindings", bound, () -> {
                    feed.catchUp(learned::put);
                    return learned.size() == BEHIND || sleep(poll);
                });
        assertThat(learned).containsEntry("s0", "r0@d").containsEntry("s" + (BEHIND - 1), "r" + (BEHIND - 1) % 4 + "@d");
    }

    @Test
    void aReadLostToAHungRedisDoesNotStopTheNextCatchUp() throws Exception {
        RouterConfig config = ConfigLoader.parse("redis: {address: \"" + redis.address() + "\", timeout: "
                + Patience.REDIS_TIMEOUT.toMillis() + "ms}", Map.of());
        announce(10);
        router = RedisClients.create(config.redis().orElseThrow());
        RedisBindingFeed feed = new RedisBindingFeed(router, KEYS);

        redis.pause();
        try {
            feed.catchUp(learned::put);
            // The read is in flight against a stopped Redis until its deadline passes.
            sleep(config.redis().orElseThrow().timeout().multipliedBy(2));
        } finally {
            redis.resume();
        }
        assertThat(learned).as("nothing read while Redis was stopped").isEmpty();

        Await.until("the next catch-up read the stream", Patience.storeCall(config).multipliedBy(3), () -> {
            feed.catchUp(learned::put);
            return learned.size() == 10 || sleep(config.pool().pollInterval());
        });
    }

    @Test
    void aRouterThatHearsEveryBatchOnTheChannelReadsFromTheStreamOnlyWhatTheChannelNeverCarried() throws Exception {
        RouterConfig config = production();
        // One entry appended as an earlier version of the router appends it, with nothing on the channel: once the
        // router has it, its first read is over.
        appendUnheard("before-start", "r0@d");
        RedisBindingFeed feed = subscribedRouter(config);
        Await.until("the router read the stream", Patience.storeCall(config).multipliedBy(3),
                () -> learned.containsKey("before-start"));

        for (int b = 0; b < 3; b++) {
            announce(b * 100, 100);
        }
        // No catch-up called: these can only have come on the channel.
        Await.until("the router heard all three batches", Patience.storeCall(config).multipliedBy(3),
                () -> learned.size() == 301);
        appendUnheard("after-batches", "r1@d");
        // Two polls, each with its read, with room for a busy machine.
        Duration twoPolls = Patience.of(config.pool().pollInterval().multipliedBy(2),
                config.redis().orElseThrow().timeout().multipliedBy(2));
        Await.until("a poll read what the channel never carried", twoPolls, () -> {
            feed.catchUp(learned::put);
            return learned.containsKey("after-batches") || sleep(config.pool().pollInterval());
        });
        assertThat(learned).containsEntry("s0", "r0@d").containsEntry("s299", "r3@d");
        assertThat(feed.entriesRead()).as("entries delivered from the stream: only the two the channel never carried")
                .isEqualTo(2);
    }

    @Test
    void anEntryTheChannelMissedIsReadAtOnceWhenTheNextBatchDoesNotStartWhereThePositionStands() throws Exception {
        RouterConfig config = production();
        subscribedRouter(config);
        announce(0, 2);
        Await.until("the router heard the first batch", Patience.storeCall(config).multipliedBy(3),
                () -> learned.size() == 2);

        // Missed by the channel (a dropped subscription, or a writer that announces no batches), then a batch that
        // starts after it. A router that took the batch's last entry as its position would never read it.
        appendUnheard("missed", "r2@d");
        announce(2, 2);
        // No catch-up called, and the poll interval is far away: the gap alone made the router read.
        Await.until("the router read the missed entry", Patience.storeCall(config).multipliedBy(3),
                () -> learned.containsKey("missed"));
        assertThat(learned).containsKeys("s0", "s1", "s2", "s3");
    }

    @Test
    void aBatchWhoseAppendsRedisRefusesIsStillHeardOnTheChannel() throws Exception {
        RouterConfig config = production();
        subscribedRouter(config);
        // The stream's key holds a string: Redis refuses every append (WRONGTYPE), as it refuses writes when out of
        // memory.
        assertThat(redis.command("SET", KEYS.bindingFeed(), "not a stream")).isEqualTo("+OK");

        announce(0, 2);
        Await.until("the router heard both announcements", Patience.storeCall(config).multipliedBy(3),
                () -> learned.size() == 2);
        assertThat(learned).containsEntry("s0", "r0@d").containsEntry("s1", "r1@d");
    }

    /** A router's settings as production's defaults have them, on this test's Redis. */
    private static RouterConfig production() {
        return ConfigLoader.parse("redis: {address: \"" + redis.address() + "\"}", Map.of());
    }

    /** A router's feed that has caught up once and whose subscription to the channel is in place. */
    private RedisBindingFeed subscribedRouter(RouterConfig config) {
        router = RedisClients.create(config.redis().orElseThrow());
        RedisBindingFeed feed = new RedisBindingFeed(router, KEYS);
        feed.catchUp(learned::put);
        Await.until("the router subscribed", Patience.storeCall(config).multipliedBy(3),
                () -> writer.getTopic(KEYS.bindingChannel()).countSubscribers() == 1);
        return feed;
    }

    /** Appends one entry to the stream as an earlier version of the router did: nothing on the batches' channel. */
    private static void appendUnheard(String session, String replica) throws IOException {
        assertThat(redis.command("XADD", KEYS.bindingFeed(), "*", RedisBindingFeed.FIELD,
                RedisBindingFeed.message(session, replica))).as("appended").matches("[0-9]+-[0-9]+");
    }

    /** Announces sessions {@code s<from>}... in one batch, as a router's store does. */
    private static void announce(int from, int n) {
        StringBuilder messages = new StringBuilder();
        for (int i = from; i < from + n; i++) {
            messages.append(RedisBindingFeed.message("s" + i, "r" + i % 4 + "@d")).append('\n');
        }
        RBatch batch = writer.createBatch();
        RedisBindingFeed.append(batch, KEYS, messages.toString());
        batch.execute();
    }

    /** Appends {@code n} announcements (sessions {@code s0}..., over four replicas) as the routers' stores do. */
    private static void announce(int n) {
        for (int from = 0; from < n; from += 10_000) {
            StringBuilder messages = new StringBuilder();
            for (int i = from; i < Math.min(n, from + 10_000); i++) {
                messages.append(RedisBindingFeed.message("s" + i, "r" + i % 4 + "@d")).append('\n');
            }
            RBatch batch = writer.createBatch();
            RedisBindingFeed.append(batch, KEYS, messages.toString());
            batch.execute();
        }
    }

    /** Sleeps, then answers false: a poll that found nothing yet. */
    private static boolean sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }
}
