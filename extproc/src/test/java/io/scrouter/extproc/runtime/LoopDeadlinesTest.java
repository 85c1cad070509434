package io.scrouter.extproc.runtime;

import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.RedisOnOneLoop;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Redis reply that arrived while the router's event loop was stalled (a GC pause, a backlog of work) is the
 * answer, not a timeout: the deadline is kept by the loop that reads the reply ({@link SystemTime#onLoops}). And a
 * call that is really unanswered still fails, one read of the sockets after its deadline.
 *
 * <p>Real {@code redis-server}, the router's Redisson client on one Netty loop, as a router limited to one CPU runs
 * it. The stall is a task that holds the loop until Redis has run the command and answered a later one, so the
 * reply is in the socket before the loop reads again, however slow the machine.
 */
class LoopDeadlinesTest {

    /** The deadline under test; a stall lasts at least three of them. */
    private static final long DEADLINE_MILLIS = 100;

    private static RedisOnOneLoop rig;
    private static RedisProcess redis;
    private static MultiThreadIoEventLoopGroup group;
    private static RedissonClient client;

    @BeforeAll
    static void start() throws Exception {
        rig = RedisOnOneLoop.start(DEADLINE_MILLIS);
        redis = rig.redis();
        group = rig.group();
        client = rig.client();
    }

    @AfterAll
    static void stop() throws Exception {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void aReplyThatArrivedWhileTheLoopStalledIsTheAnswer() throws Exception {
        CompletableFuture<Long> answer = incrementThenStall(SystemTime.onLoops(group), "kept-by-the-loop");

        assertThat(answer.get(Patience.of(Duration.ofMillis(4 * DEADLINE_MILLIS)).toMillis(), TimeUnit.MILLISECONDS))
                .as("the INCR's reply, read after the stall").isEqualTo(1L);
    }

    /**
     * The same stall with the deadline on a timer thread, as the router had it: the timer fires during the stall and
     * the waiting reply is taken for a Redis timeout. This is the fault the test above guards against.
     */
    @Test
    void aTimerThreadTakesTheSameStallForATimeout() throws Exception {
        CompletableFuture<Long> answer = incrementThenStall(SystemTime.shared(), "kept-by-a-timer-thread");

        assertThatThrownBy(() -> answer.get(Patience.of(Duration.ofMillis(4 * DEADLINE_MILLIS)).toMillis(),
                TimeUnit.MILLISECONDS)).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
        assertThat(redis.command("GET", "kept-by-a-timer-thread")).as("Redis ran the command all the same").isEqualTo("1");
    }

    @Test
    void aCallNeverAnsweredFailsOnTheLoopAfterItsDeadline() throws Exception {
        SystemTime time = SystemTime.onLoops(group);
        EventLoop loop = group.next();
        CompletableFuture<String> never = new CompletableFuture<>();
        long[] startedAt = new long[1];
        loop.execute(() -> {
            startedAt[0] = System.nanoTime();
            time.within(never, DEADLINE_MILLIS);
        });

        assertThatThrownBy(() -> never.get(Patience.of(Duration.ofMillis(DEADLINE_MILLIS)).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(TimeoutException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt[0]))
                .as("not before its deadline").isGreaterThanOrEqualTo(DEADLINE_MILLIS);
    }

    /**
     * On the loop, inside its read of a Redis reply (where a router decides: gRPC reads run decisions on the loop):
     * sends {@code INCR key} under {@code time}'s deadline, then holds the loop until Redis has run it and answered
     * a later command (so the reply is in the socket), and for at least three deadlines. When the hold ends the
     * deadline is due before the loop reads its sockets again.
     */
    private CompletableFuture<Long> incrementThenStall(SystemTime time, String key) {
        CompletableFuture<Long> answer = new CompletableFuture<>();
        long giveUpAt = System.nanoTime() + Patience.of(Duration.ofMillis(4 * DEADLINE_MILLIS)).toNanos();
        group.next().execute(() -> client.getBucket("any", StringCodec.INSTANCE).isExistsAsync().whenComplete((x, error) -> {
            long stallUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * DEADLINE_MILLIS);
            time.within(client.getAtomicLong(key).incrementAndGetAsync().toCompletableFuture(), DEADLINE_MILLIS)
                    .whenComplete((v, e) -> {
                        if (e == null) {
                            answer.complete(v);
                        } else {
                            answer.completeExceptionally(e);
                        }
                    });
            try {
                while (!"1".equals(redis.command("GET", key)) && System.nanoTime() < giveUpAt) {
                    Thread.sleep(5);
                }
                redis.command("PING");
                long left = stallUntil - System.nanoTime();
                if (left > 0) {
                    TimeUnit.NANOSECONDS.sleep(left);
                }
            } catch (Exception e) {
                answer.completeExceptionally(e);
            }
        }));
        return answer;
    }
}
