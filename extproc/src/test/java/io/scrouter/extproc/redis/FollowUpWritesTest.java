package io.scrouter.extproc.redis;

import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The writes that follow bindings, against a real {@code redis-server}: what is added before the loop turns goes
 * out as one batch with one ZADD per replica, the feed keeps one entry per new binding, and a stopped loop loses
 * its pending writes without failing the decision that added them.
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
