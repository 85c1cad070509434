package io.scrouter.extproc.deploy;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.testkit.envoy.EnvoyModel;
import io.scrouter.testkit.envoy.EnvoyStandIn;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A client that sends the group header itself never chooses its group: with the shipped {@code envoy/envoy.yaml}
 * the connection manager's early header mutation removes the client's copy before any filter runs
 * ({@code EnvoyStandIn} follows {@code HttpConnectionManagerImpl::ActiveStream::decodeHeaders}, which applies
 * {@code early_header_mutation_extensions} first), so a router with groups and no {@code withoutGroup} sees no
 * group and refuses the call. The same forged request through a model that does not remove the header reaches
 * the other team's replica: the test fails if the removal is ever dropped from the shipped config.
 */
class ForgedGroupHeaderThroughEnvoyStandInTest {

    private final List<AutoCloseable> open = new ArrayList<>();
    private ReplicaStub teamA;
    private ReplicaStub teamB;
    private int routerPort;
    private EnvoyModel shipped;

    @BeforeEach
    void start() throws Exception {
        teamA = keep(ReplicaStub.start("a1"));
        teamB = keep(ReplicaStub.start("b1"));
        routerPort = RedisProcess.freePort();
        RouterServer router = RouterServer.start(ConfigLoader.parse("""
                server: {bindAddress: 127.0.0.1, port: %d, drainPeriod: 0ms}
                pool:
                  static:
                    - {id: a1, grpc: "%s", metricsUrl: "%s", state: ready, group: team-a}
                    - {id: b1, grpc: "%s", metricsUrl: "%s", state: ready, group: team-b}
                groups:
                  allow: {team-a: [team-a], team-b: [team-b]}
                """.formatted(routerPort, teamA.grpcAddress(), teamA.metricsUrl(), teamB.grpcAddress(),
                teamB.metricsUrl()), Map.of()));
        open.add(router::close);
        shipped = EnvoyModel.of(EnvoyProtos.bootstrap(RepoFiles.read(RepoFiles.root().resolve("envoy/envoy.yaml"))));
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T c) {
        open.add(c);
        return c;
    }

    private Duration healthWait(EnvoyModel model) {
        return model.healthCheck().interval().plus(model.healthCheck().timeout()).multipliedBy(15);
    }

    /** A Config call through an Envoy stand-in of {@code model}, carrying a forged group header. */
    private String forgedCall(EnvoyModel model, String session, String forgedGroup) throws Exception {
        EnvoyStandIn envoy = keep(EnvoyStandIn.start(model, List.of(new InetSocketAddress("127.0.0.1", routerPort))));
        assertThat(envoy.awaitHealthyExtProc(1, healthWait(model))).isTrue();
        ManagedChannel client = NettyChannelBuilder.forAddress("127.0.0.1", envoy.port()).usePlaintext().build();
        open.add(client::shutdownNow);
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(RouteHeaders.SESSION_ID, Metadata.ASCII_STRING_MARSHALLER), session);
        headers.put(Metadata.Key.of(ReplicaGroups.HEADER, Metadata.ASCII_STRING_MARSHALLER), forgedGroup);
        Channel channel = ClientInterceptors.intercept(client, MetadataUtils.newAttachHeadersInterceptor(headers));
        return new String(ClientCalls.blockingUnaryCall(channel, ReplicaStub.CONFIG,
                CallOptions.DEFAULT.withDeadlineAfter(healthWait(model).toMillis(), TimeUnit.MILLISECONDS),
                ReplicaStub.requestFor(session)), StandardCharsets.UTF_8);
    }

    @Test
    void aForgedGroupHeaderNeverReachesTheRouterThroughTheShippedConfig() throws Exception {
        assertThat(shipped.earlyRemovedHeaders()).contains(ReplicaGroups.HEADER);

        StatusRuntimeException refused = catchThrowableOfType(
                () -> forgedCall(shipped, UUID.randomUUID().toString(), "team-b"), StatusRuntimeException.class);
        assertThat(refused).as("the forged call must not be served").isNotNull();
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(refused.getStatus().getDescription()).contains(ReplicaGroups.HEADER, "token");
    }

    @Test
    void withoutTheEarlyRemovalTheSameForgedHeaderWouldChooseTheOtherTeamsReplica() throws Exception {
        List<String> removed = new ArrayList<>(shipped.earlyRemovedHeaders());
        removed.remove(ReplicaGroups.HEADER);
        String servedBy = forgedCall(shipped.withEarlyRemovedHeaders(removed), UUID.randomUUID().toString(), "team-b");
        assertThat(servedBy).isEqualTo("b1");
    }
}
