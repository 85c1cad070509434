package io.scrouter.extproc.redis;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The session store as a router in single mode builds it: a new session's {@code SET} on the pipelined connection of
 * its event loop, the follow-up batch on the same connection, carried by the next {@code SET} before its window ends.
 * Real {@code redis-server}; the Redis client as the router makes it.
 */
class PipelinedSessionStoreTest {

    private static final RedisKeys KEYS = new RedisKeys("piped");
    private static final SessionTtls TTLS = new SessionTtls(Duration.ofMinutes(30), Duration.ofMinutes(30),
            Duration.ofMinutes(1));
    private static final Duration BOUND = Patience.of(Duration.ofSeconds(1));
    /** A gathering window no test waits out: a batch that goes out before it was carried by a SET. */
    private static final Duration NEVER = Duration.ofHours(1);

    private RedisProcess redis;
    private EventLoopGroup group;
    private EventLoop loop;
    private RedissonClient client;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(RedisProcess.installed(), "needs redis-server: run `bash .ci/run` or `apt-get install -y redis-server`");
        redis = RedisProcess.start();
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        loop = group.next();
    }

    @AfterEach
    void stop() throws Exception {
        if (client != null) {
            client.shutdown();
        }
        if (group != null) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private RedisSessionStore store(Duration gather) {
        RouterConfig.Redis settings = ConfigLoader.parse("redis: {address: \"" + redis.address() + "\", timeout: "
                + Patience.REDIS_TIMEOUT.toMillis() + "ms, keyPrefix: piped}", Map.of()).redis().orElseThrow();
        client = RedisClients.create(settings, group);
        PipelinedConnections pipelined = PipelinedConnections.forSettings(settings, group);
        assertThat(pipelined).as("single mode on event loops: pipelined").isNotNull();
        return new RedisSessionStore(client, KEYS, TTLS, System::currentTimeMillis, loop, gather, pipelined);
    }

    /** A find-or-bind made on the store's loop, as the router's request path makes it. */
    private Lookup bindOnLoop(RedisSessionStore store, String session, String replica) throws Exception {
        CompletableFuture<Lookup> call = loop.submit(() -> store.findOrBind(session, replica))
                .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        return call.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aFollowUpBatchGoesOutWithTheNextSetInsteadOfWaitingForItsWindow() throws Exception {
        RedisSessionStore store = store(NEVER);
        Map<String, Long> before = redis.commandCalls();
        assertThat(bindOnLoop(store, "first", "r1@d").created()).isTrue();
        // Its announcement waits for a window no test outlives...
        Thread.sleep(Patience.REDIS_TIMEOUT.toMillis());
        assertThat(announced()).as("before the next SET").isEmpty();
        // ...until the next new session's SET carries it.
        assertThat(bindOnLoop(store, "second", "r2@d").created()).isTrue();
        Await.untilChecked("the first session announced with the second's SET", BOUND,
                () -> announced().contains("first r1@d"));
        assertThat(redis.reply("ZRANGE", KEYS.replicaSessions("r1"), "0", "-1")).as("r1's index")
                .asList().containsExactly("first");
        assertThat(announced()).as("the second's own batch waits for the next SET").containsExactly("first r1@d");
        Map<String, Long> after = redis.commandCalls();
        assertThat(List.of("set", "evalsha", "eval").stream().map(c -> after.getOrDefault(c, 0L)
                - before.getOrDefault(c, 0L)).toList())
                .as("Redis's SET, EVALSHA and EVAL calls: the script loaded at connect, called by its hash")
                .containsExactly(2L, 1L, 0L);
    }

    @Test
    void aRedisThatLostTheScriptRunsTheBatchFromItsText() throws Exception {
        RedisSessionStore store = store(Duration.ZERO);
        assertThat(bindOnLoop(store, "before", "r1@d").created()).isTrue();
        Await.untilChecked("the first batch in", BOUND, () -> announced().contains("before r1@d"));
        redis.reply("SCRIPT", "FLUSH");
        assertThat(bindOnLoop(store, "after", "r1@d").created()).isTrue();
        Await.untilChecked("the batch sent again as EVAL after NOSCRIPT", BOUND,
                () -> announced().contains("after r1@d"));
        assertThat(redis.reply("ZRANGE", KEYS.replicaSessions("r1"), "0", "-1")).asList()
                .containsExactly("before", "after");
    }

    @Test
    void aLateSetToAnAbandonedCallIsNeitherAnnouncedNorIndexed() throws Exception {
        RedisSessionStore store = store(Duration.ZERO);
        assertThat(bindOnLoop(store, "warm", "r1@d").created()).isTrue();
        CompletableFuture<Lookup> abandoned;
        redis.pause();
        try {
            abandoned = loop.submit(() -> SystemTime.onLoops(group).within(store.findOrBind("s-late", "r1@d"), 100))
                    .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            assertThatThrownBy(() -> abandoned.get(BOUND.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
        } finally {
            redis.resume();
        }
        Await.untilChecked("the late SET ran in Redis", BOUND,
                () -> "r1@d".equals(redis.command("GET", KEYS.session("s-late"))));
        assertThat(bindOnLoop(store, "s-next", "r1@d").created()).isTrue();
        Await.untilChecked("the next binding announced", BOUND, () -> announced().contains("s-next r1@d"));
        assertThat(announced()).as("the feed").noneMatch(e -> e.startsWith("s-late "));
        assertThat(redis.reply("ZRANGE", KEYS.replicaSessions("r1"), "0", "-1")).as("r1's index")
                .asList().contains("s-next").doesNotContain("s-late");
    }

    /** The feed stream's entries as {@code <session> <replica>} texts. */
    private List<String> announced() throws Exception {
        Object entries = redis.reply("XRANGE", KEYS.bindingFeed(), "-", "+");
        return ((List<?>) entries).stream()
                .map(e -> (List<?>) ((List<?>) e).get(1))
                .map(fields -> String.valueOf(fields.get(1)))
                .toList();
    }
}
