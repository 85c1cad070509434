package io.scrouter.extproc.redis;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The request path's pipelined connection against a real {@code redis-server}: replies reach their callers in order,
 * a connection lost or refused fails what waits with a reason and the next call connects again, a hung Redis is
 * given up at the backstop while a stalled router is not, and the password and database are set before any
 * command.
 */
class PipelinedConnectionTest {

    /** The connection's {@code redis.timeout}: production's, with room for a busy machine. */
    private static final long TIMEOUT_MILLIS = Patience.REDIS_TIMEOUT.toMillis();
    private static final long BACKSTOP_MILLIS = RedisClients.backstopMillis((int) TIMEOUT_MILLIS);
    /** A connect and a few calls on loopback, with room. */
    private static final Duration BOUND = Patience.of(Duration.ofSeconds(1));

    private EventLoopGroup group;
    private EventLoop loop;
    private RedisProcess redis;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(RedisProcess.installed(), "needs redis-server: run `bash .ci/run` or `apt-get install -y redis-server`");
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        loop = group.next();
    }

    @AfterEach
    void stop() throws Exception {
        if (redis != null) {
            redis.close();
        }
        if (group != null) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private PipelinedConnection connection(String password, int database) {
        return new PipelinedConnection(loop, redis.address(), password, database, TIMEOUT_MILLIS, List.of());
    }

    /** Runs {@code calls} on the connection's loop, in one task, and returns their replies' futures. */
    private <T> T onLoop(Supplier<T> calls) throws Exception {
        return loop.submit(calls::get).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static Object get(CompletableFuture<Object> reply) throws Exception {
        return reply.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void repliesReachTheirCallersInOrderOnOneConnection() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        redis.reply("SET", "taken", "x");
        List<CompletableFuture<Object>> counts = onLoop(() -> {
            List<CompletableFuture<Object>> sent = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                sent.add(c.call("INCR", "n"));
            }
            return sent;
        });
        for (int i = 0; i < counts.size(); i++) {
            assertThat(get(counts.get(i))).as("reply %d", i).isEqualTo((long) i + 1);
        }
        CompletableFuture<Object> refused = c.call("SET", "taken", "y", "NX");
        CompletableFuture<Object> wrongType = c.call("INCR", "taken");
        CompletableFuture<Object> after = c.call("GET", "taken");
        assertThat(get(refused)).as("SET NX on a key that exists: nil").isNull();
        assertThatThrownBy(() -> get(wrongType)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(Resp2.ErrorReply.class).hasMessageContaining("not an integer");
        assertThat(get(after)).as("an error reply takes its own place, not the next one's").isEqualTo("x");
        // Every one of those 2,003 commands on one connection.
        assertThat(clients()).as("connections Redis sees: ours and this check's").isEqualTo(2);
    }

    @Test
    void aWriteWaitsForTheNextCallsFlush() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        assertThat(get(c.call("PING"))).isEqualTo("PONG");
        CompletableFuture<Object> written = onLoop(() -> c.write("SET", "held", "1"));
        // Nothing flushes it: after a round trip's worth of time, Redis has still not seen it.
        Thread.sleep(TIMEOUT_MILLIS);
        assertThat(redis.reply("EXISTS", "held")).as("an unflushed write").isEqualTo(0L);
        assertThat(written).isNotDone();
        assertThat(get(c.call("GET", "held"))).as("the call after it, in the same write").isEqualTo("1");
        assertThat(get(written)).isEqualTo("OK");
    }

    @Test
    void aConnectionRedisClosesFailsWhatWaitsAndTheNextCallConnectsAgain() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        CompletableFuture<Object> blocked = blockedInRedis(c);
        redis.reply("CLIENT", "KILL", "TYPE", "normal");
        assertThatThrownBy(() -> get(blocked)).isInstanceOf(ExecutionException.class)
                .hasMessageContaining("closed with 1 commands unanswered");
        assertTheNextCallOpensAWorkingConnection(c);
    }

    @Test
    void aRedisThatIsDownFailsCallsAtOnceUntilItIsBack() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        assertThat(get(c.call("PING"))).isEqualTo("PONG");
        redis.kill();
        // The first call may still go out on the old connection before its loss is read; it fails either way.
        Await.untilChecked("a call refused: nothing listens", BOUND, () -> {
            try {
                get(c.call("PING"));
                return false;
            } catch (ExecutionException e) {
                return e.getMessage().contains("cannot connect to Redis at " + redis.address());
            }
        });
        assertFailsAtOnceWithTheLastReason(c, "cannot connect to Redis at " + redis.address());
        redis.restart();
        Await.untilChecked("calls succeed once Redis is back", BOUND.plusMillis(PipelinedConnection.CONNECT_RETRY_MILLIS),
                () -> {
                    try {
                        return "PONG".equals(get(c.call("PING")));
                    } catch (ExecutionException stillRefused) {
                        return false;
                    }
                });
    }

    @Test
    void aHungRedisFailsTheCallAtTheBackstopAndTheNextConnectionWorks() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        assertThat(get(c.call("PING"))).isEqualTo("PONG");
        redis.pause();
        try {
            long sent = System.nanoTime();
            CompletableFuture<Object> hung = c.call("SET", "hung", "1");
            assertThatThrownBy(() -> hung.get(BACKSTOP_MILLIS + BOUND.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(PipelinedConnection.ReplyTimeoutException.class)
                    .hasMessageContaining("did not answer within " + BACKSTOP_MILLIS + " ms");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent)).as("not before the backstop")
                    .isGreaterThanOrEqualTo(BACKSTOP_MILLIS);
        } finally {
            redis.resume();
        }
        assertTheNextCallOpensAWorkingConnection(c);
    }

    @Test
    void aReplyThatCameWhileTheLoopStalledPastTheBackstopIsTaken() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        assertThat(get(c.call("PING"))).isEqualTo("PONG");
        // A pause of the router (a long GC) past the backstop, with the reply in the socket meanwhile.
        CompletableFuture<Object> reply = loop.submit(() -> {
            CompletableFuture<Object> r = c.call("SET", "stalled", "1");
            try {
                Thread.sleep(2 * BACKSTOP_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return r;
        }).get(2 * BACKSTOP_MILLIS + BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(get(reply)).as("the reply read after the stall, not a timeout").isEqualTo("OK");
    }

    @Test
    void thePasswordAndTheDatabaseAreSetBeforeTheFirstCommand() throws Exception {
        redis = RedisProcess.startProtected("pipelined-secret");
        PipelinedConnection c = connection("pipelined-secret", 3);
        assertThat(get(c.call("SET", "in-three", "1"))).isEqualTo("OK");
        assertThat(String.valueOf(redis.reply("INFO", "keyspace"))).as("the key went to database 3")
                .contains("db3:keys=1").doesNotContain("db0:");

        PipelinedConnection wrong = connection("not-the-password", 0);
        assertThatThrownBy(() -> get(wrong.call("PING"))).isInstanceOf(ExecutionException.class)
                .hasMessageContaining("redis.password was refused");
        assertFailsAtOnceWithTheLastReason(wrong, "redis.password was refused");
        PipelinedConnection none = connection(null, 0);
        assertThatThrownBy(() -> get(none.call("PING"))).isInstanceOf(ExecutionException.class)
                .hasMessageContaining("NOAUTH");
    }

    /**
     * A call made right after a refusal fails before the loop runs anything else, with the refusal's reason: no new
     * connection is tried until {@link PipelinedConnection#CONNECT_RETRY_MILLIS} has passed. (A machine slow enough to
     * reach this call after that interval tries again, and is not checked.)
     */
    private void assertFailsAtOnceWithTheLastReason(PipelinedConnection c, String reason) throws Exception {
        long refusedAt = System.nanoTime();
        CompletableFuture<Object> soonAfter = onLoop(() -> c.call("PING"));
        if (System.nanoTime() - refusedAt < TimeUnit.MILLISECONDS.toNanos(PipelinedConnection.CONNECT_RETRY_MILLIS)) {
            assertThat(soonAfter).as("failed in the call itself, without a new connection").isCompletedExceptionally();
            assertThatThrownBy(() -> get(soonAfter)).hasMessageContaining(reason);
        }
    }

    @Test
    void aCallMadeFromAFailedCallersCallbackGetsItsOwnReplyOnTheNextConnection() throws Exception {
        redis = RedisProcess.start();
        PipelinedConnection c = connection(null, 0);
        CompletableFuture<Object> blocked = blockedInRedis(c);
        // As a follow-up batch chained behind a failed one does: a new call from inside the failure's callback.
        CompletableFuture<Object> retried = blocked.exceptionallyCompose(e -> c.call("SET", "from-callback", "1"));
        redis.reply("CLIENT", "KILL", "TYPE", "normal");
        assertThatThrownBy(() -> get(blocked)).isInstanceOf(ExecutionException.class);
        assertThat(get(retried)).as("the callback's SET, answered on the new connection").isEqualTo("OK");
        assertThat(get(c.call("GET", "from-callback"))).as("the next call's own reply, not the SET's").isEqualTo("1");
    }

    private void assertTheNextCallOpensAWorkingConnection(PipelinedConnection c) throws Exception {
        assertThat(get(c.call("SET", "after", "1"))).as("on a new connection").isEqualTo("OK");
        assertThat(redis.reply("GET", "after")).isEqualTo("1");
    }

    /** A command that Redis holds without answering until its connection goes: a BLPOP on an empty list. */
    private CompletableFuture<Object> blockedInRedis(PipelinedConnection c) {
        CompletableFuture<Object> blocked = c.call("BLPOP", "never", "0");
        Await.untilChecked("the BLPOP waits in Redis", BOUND, () -> blockedClients() == 1);
        return blocked;
    }

    private long clients() throws Exception {
        return field(String.valueOf(redis.reply("INFO", "clients")), "connected_clients");
    }

    private long blockedClients() throws Exception {
        return field(String.valueOf(redis.reply("INFO", "clients")), "blocked_clients");
    }

    private static long field(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " not in " + info);
    }
}
