package io.scrouter.extproc.routing;

import io.netty.channel.EventLoop;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.redis.RedisSessionStore;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.RedisOnOneLoop;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.client.RedisTimeoutException;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stall of the router's event loop longer than the Redis client's own timeout (a long GC pause) is not a store
 * outage. Redisson's timer thread runs on through the stall and fails the command in flight, its reply unread; the
 * request-path call is then made once more, on the loop, and the breaker hears of no failure, so placement does
 * not fall back to rendezvous for the settle window while Redis answers at once.
 *
 * <p>Real {@code redis-server}, the router's Redisson client and store on one Netty loop, as a router limited to
 * one CPU runs them. The stall is a task that holds the loop until Redisson has failed the first attempt, however
 * late its timer thread runs on a busy machine, and for two deadlines after that.
 */
class StallPastTheRedisBackstopTest {

    /** {@code redis.timeout} under test: the router's deadline, and a quarter of Redisson's own timeout. */
    private static final long TIMEOUT_MILLIS = 100;
    private static final RedisKeys KEYS = new RedisKeys("stall");

    private static RedisOnOneLoop rig;

    @BeforeAll
    static void start() throws Exception {
        rig = RedisOnOneLoop.start(TIMEOUT_MILLIS);
    }

    @AfterAll
    static void stop() throws Exception {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void aFindOrBindFailedByTheRedisClientsTimerDuringAStallIsMadeAgainAndIsNoStoreFailure() throws Exception {
        EventLoop loop = rig.group().next();
        SystemTime time = SystemTime.onLoops(rig.group());
        Duration minute = Duration.ofMinutes(1);
        RedisSessionStore store = new RedisSessionStore(rig.client(), KEYS, new SessionTtls(minute, minute, minute),
                System::currentTimeMillis, loop, Duration.ofMillis(1));
        // One recorded failure would open the breaker: the test sees any failure the stall is taken for.
        GuardedStore guard = new GuardedStore(new StoreHealth(1, minute.toMillis()), time,
                RouterSettings.defaults().withStoreTimeoutMillis(TIMEOUT_MILLIS));
        String session = UUID.randomUUID().toString();
        List<CompletableFuture<Lookup>> attempts = new CopyOnWriteArrayList<>();
        CompletableFuture<Lookup> decided = new CompletableFuture<>();
        long backstopMillis = 4 * TIMEOUT_MILLIS;
        long giveUpAt = System.nanoTime() + Patience.of(Duration.ofMillis(5 * backstopMillis)).toNanos();

        loop.execute(() -> {
            guard.onRequestPath(() -> {
                CompletableFuture<Lookup> attempt = store.findOrBind(session, "replica-a");
                attempts.add(attempt);
                return attempt;
            }).whenComplete((lookup, error) -> {
                if (error == null) {
                    decided.complete(lookup);
                } else {
                    decided.completeExceptionally(error);
                }
            });
            // The stall: the loop is held until Redisson's timer has failed the first attempt, then for two more
            // deadlines, as the backlog a long pause leaves holds it (a retry under a timer thread's deadline, sent
            // at once, would run out of it there).
            try {
                while (!attempts.get(0).isDone() && System.nanoTime() < giveUpAt) {
                    Thread.sleep(5);
                }
                Thread.sleep(2 * TIMEOUT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });

        Lookup lookup = decided.get(Patience.of(Duration.ofMillis(6 * backstopMillis)).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(attempts.get(0)).as("the first attempt, failed by Redisson's timer during the stall")
                .isCompletedExceptionally();
        Throwable first = attempts.get(0).handle((v, e) -> e).join();
        assertThat(first instanceof CompletionException ? first.getCause() : first)
                .as("Redisson's own timeout, not the router's deadline").isInstanceOf(RedisTimeoutException.class);
        assertThat(attempts).as("made once more after the stall").hasSize(2);
        assertThat(lookup.created()).as("the first attempt bound it; the second found that binding").isFalse();
        assertThat(lookup.binding().replicaId()).isEqualTo("replica-a");
        assertThat(guard.breakerOpen()).as("no failure recorded: the breaker is closed").isFalse();
        assertThat(guard.recentlyFailed()).as("and placement does not settle on rendezvous").isFalse();
    }
}
