package io.scrouter.extproc.redis;

import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.ObservedSessionStore;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.session.StoreCallObserver;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A find-or-bind whose caller stopped waiting is not announced and not indexed when its reply comes late.
 *
 * <p>The caller (the router's request path) refused the request or placed the session by rendezvous, and writes
 * that placement back over whatever the late script bound. Announced, the late binding would reach the other
 * routers' caches, and the session's next request through another router would go to a replica it never ran on.
 * Real {@code redis-server}, stopped with SIGSTOP while the call is in it; the store wrapped for metrics as the
 * router wraps it, and the deadline put on the future the router puts it on.
 */
class AbandonedFindOrBindTest {

    private static final RedisKeys KEYS = new RedisKeys("late");
    /** The caller's deadline; Redisson's own timeout is far behind it, as in the router (a backstop). */
    private static final long DEADLINE_MILLIS = 100;

    @Test
    void aLateReplyToAnAbandonedCallIsNeitherAnnouncedNorIndexed() throws Exception {
        assumeTrue(RedisProcess.installed(), "needs redis-server: run `bash .ci/run` or `apt-get install -y redis-server`");
        Duration bound = Patience.of(Duration.ofSeconds(1));
        try (RedisProcess redis = RedisProcess.start()) {
            Config c = new Config();
            // One connection: the late reply is read, and anything it sends is written, before the next call's.
            c.useSingleServer().setAddress(redis.address()).setConnectionPoolSize(1).setConnectionMinimumIdleSize(1)
                    .setTimeout((int) bound.toMillis());
            RedissonClient client = Redisson.create(c);
            try {
                SessionStore store = new ObservedSessionStore(new RedisSessionStore(client, KEYS,
                        new SessionTtls(Duration.ofMinutes(30), Duration.ofMinutes(30), Duration.ofMinutes(1)),
                        System::currentTimeMillis), StoreCallObserver.NONE);
                store.findOrBind("warm", "r1@d").get(bound.toMillis(), TimeUnit.MILLISECONDS);

                CompletableFuture<Lookup> abandoned;
                redis.pause();
                try {
                    abandoned = SystemTime.shared().within(store.findOrBind("s-late", "r1@d"), DEADLINE_MILLIS);
                    assertThatThrownBy(() -> abandoned.get(bound.toMillis(), TimeUnit.MILLISECONDS))
                            .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
                } finally {
                    redis.resume();
                }
                Await.untilChecked("the late script ran in Redis", bound,
                        () -> "r1@d".equals(redis.command("GET", KEYS.session("s-late"))));
                Lookup next = store.findOrBind("s-next", "r1@d").get(bound.toMillis(), TimeUnit.MILLISECONDS);
                assertThat(next.created()).isTrue();
                Await.untilChecked("the next binding announced", bound,
                        () -> announced(redis).contains("s-next r1@d"));

                assertThat(announced(redis)).as("the feed").noneMatch(e -> e.startsWith("s-late "));
                assertThat(redis.reply("ZRANGE", KEYS.replicaSessions("r1"), "0", "-1")).as("r1's index")
                        .asList().contains("s-next").doesNotContain("s-late");
            } finally {
                client.shutdown();
            }
        }
    }

    /** The feed stream's entries as {@code <session> <replica>} texts. */
    private static List<String> announced(RedisProcess redis) throws Exception {
        Object entries = redis.reply("XRANGE", KEYS.bindingFeed(), "-", "+");
        return ((List<?>) entries).stream()
                .map(e -> (List<?>) ((List<?>) e).get(1))
                .map(fields -> String.valueOf(fields.get(1)))
                .toList();
    }
}
