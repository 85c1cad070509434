package io.scrouter.extproc;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.testing.Patience;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the README's run command starts: the embedded default configuration, no Redis, no Spark. It must
 * answer a real ext_proc request over real gRPC, pin the session, and report healthy.
 */
class EmbeddedDefaultTest {

    @Test
    void embeddedDefaultAnswersRealExtProcRequestsAndPinsTheSession() throws Exception {
        String yaml;
        try (InputStream in = RunCommand.class.getResourceAsStream(RunCommand.DEFAULT_CONFIG)) {
            yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        // Same file as `bin/run`, on a free port so the test never clashes with a running service.
        RouterConfig config = ConfigLoader.parse(yaml, Map.of("SCROUTER_PORT", "0", "SCROUTER_ADMIN_PORT", "0",
                "SCROUTER_METRICS_PORT", "0"));
        assertThat(config.redis()).isEmpty();
        try (RouterServer rs = RouterServer.start(config)) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
            try {
                HealthCheckResponse health = HealthGrpc.newBlockingStub(channel)
                        .check(HealthCheckRequest.newBuilder().setService(RouteHeaders.HEALTH_SERVICE).build());
                assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

                ExtProcClient envoy = new ExtProcClient(channel, Patience.ANSWER);
                String session = UUID.randomUUID().toString();
                ProcessingResponse first = envoy.send(ExtProcClient.sparkCall("ExecutePlan", session));
                String upstream = ExtProcClient.upstreamOf(first);
                assertThat(upstream).isIn("127.0.0.1:15002", "127.0.0.1:15003");
                for (int i = 0; i < 5; i++) {
                    assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("AnalyzePlan", session))))
                            .isEqualTo(upstream);
                }
                // No Spark UI answers on this machine's default ports: placement runs degraded, visibly.
                assertThat(rs.routing().placement().isDegraded()).isTrue();
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
