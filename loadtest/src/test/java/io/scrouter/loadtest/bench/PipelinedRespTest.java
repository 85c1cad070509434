package io.scrouter.loadtest.bench;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.redis.Resp2;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The benchmark's pipelined client against a real {@code redis-server}: replies reach their callers in order while
 * many commands are outstanding, every RESP2 reply type decodes, and a reply larger than one read arrives whole.
 */
class PipelinedRespTest {

    /** One call on loopback, with room for a busy machine; the bench itself never waits on a single call. */
    private static final long CALL_SECONDS = 30;

    private static RedisProcess redis;
    private static EventLoopGroup loop;
    private static PipelinedResp resp;

    @BeforeAll
    static void start() throws Exception {
        redis = RedisProcess.start();
        loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        resp = PipelinedResp.connect(loop, "127.0.0.1", redis.port());
    }

    @AfterAll
    static void stop() throws Exception {
        resp.close();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        redis.close();
    }

    private static Object get(CompletableFuture<Object> reply) throws Exception {
        return reply.get(CALL_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void manyOutstandingCommandsAreAnsweredEachToItsCaller() throws Exception {
        List<CompletableFuture<Object>> replies = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            replies.add(resp.call("INCR", "pipelined-counter"));
        }
        for (int i = 0; i < replies.size(); i++) {
            assertThat(get(replies.get(i))).isEqualTo((long) i + 1);
        }
    }

    @Test
    void everyReplyTypeDecodes() throws Exception {
        assertThat(get(resp.call("SET", "k", "värde"))).isEqualTo("OK");
        assertThat(get(resp.call("GET", "k"))).isEqualTo("värde");
        assertThat(get(resp.call("GET", "no-such-key"))).isNull();
        assertThat(get(resp.call("RPUSH", "list", "a", "b"))).isEqualTo(2L);
        assertThat(get(resp.call("LRANGE", "list", "0", "-1"))).isEqualTo(List.of("a", "b"));
        // Lua's false comes back as a nil bulk string inside the array.
        assertThat(get(resp.call("EVAL", "return {KEYS[1], 7, false}", "1", "x"))).isEqualTo(Arrays.asList("x", 7L, null));
        assertThatThrownBy(() -> get(resp.call("EVALSHA", "0000000000000000000000000000000000000000", "0")))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(Resp2.ErrorReply.class)
                .hasMessageContaining("NOSCRIPT");
        assertThat(get(resp.call("PING"))).as("an error leaves the connection usable").isEqualTo("PONG");
    }

    @Test
    void aReplyLargerThanOneReadArrivesWhole() throws Exception {
        String big = "x".repeat(3 * 1024 * 1024);
        assertThat(get(resp.call("SET", "big", big))).isEqualTo("OK");
        assertThat(get(resp.call("GET", "big"))).isEqualTo(big);
    }
}
