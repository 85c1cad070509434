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

    /** Appends {@code n} announcements (sessions {@code s0}..., over four replicas) as the routers' stores do. */
    private static void announce(int n) {
        for (int from = 0; from < n; from += 10_000) {
            RBatch batch = writer.createBatch();
            for (int i = from; i < Math.min(n, from + 10_000); i++) {
                RedisBindingFeed.append(batch, KEYS, "s" + i, "r" + i % 4 + "@d");
            }
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
