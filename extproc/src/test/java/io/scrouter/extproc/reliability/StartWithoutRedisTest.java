package io.scrouter.extproc.reliability;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.testing.ExtProcClient;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression: a router whose Redis is unreachable at start used to fail in its constructor (the binding-feed
 * subscription connected eagerly) and linger without listening. It must start, answer every request with a
 * defined status, and pick Redis up when it appears.
 */
class StartWithoutRedisTest {

    @Test
    void routerStartsAndAnswersWhileRedisIsDownThenUsesItOnceUp() throws Exception {
        int port = RedisProcess.freePort();
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0}
                redis: {address: "redis://127.0.0.1:%d", timeout: 50ms}
                pool: {pollInterval: 100ms}
                """.formatted(port);
        try (RouterServer rs = RouterServer.start(ConfigLoader.parse(yaml, Map.of()))) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
            try {
                ExtProcClient envoy = new ExtProcClient(channel);
                var answer = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
                // No pool could be read yet: a defined, retryable rejection rather than a hang.
                assertThat(ExtProcClient.rejectionCode(answer)).isEqualTo(Status.Code.UNAVAILABLE.value());
                assertThat(rs.poolRefresher().lastError()).isNotNull();
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
