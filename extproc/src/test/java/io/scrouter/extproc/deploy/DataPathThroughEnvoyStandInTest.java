package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.testkit.envoy.EnvoyModel;
import io.scrouter.testkit.envoy.EnvoyStandIn;
import io.scrouter.testkit.envoy.RecordedCall;
import io.scrouter.testkit.redis.RedisProcess;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The service behind the Envoy stand-in running the shipped {@code envoy/envoy.yaml}: the data path with Envoy's
 * stream lifetime, body buffering and health checks, against stub replicas. The same stand-in carries the
 * real-Spark tests of spark-e2e.
 */
class DataPathThroughEnvoyStandInTest {

    private ReplicaStub r1;
    private ReplicaStub r2;
    private RouterServer router;
    private EnvoyModel model;
    private EnvoyStandIn envoy;
    private ManagedChannel client;
    private int routerPort;

    @BeforeEach
    void start() throws Exception {
        r1 = ReplicaStub.start("r1");
        r2 = ReplicaStub.start("r2");
        routerPort = RedisProcess.freePort();
        router = startRouter();
        model = EnvoyModel.of(EnvoyProtos.bootstrap(RepoFiles.read(RepoFiles.root().resolve("envoy/envoy.yaml"))));
        envoy = EnvoyStandIn.start(model, List.of(new InetSocketAddress("127.0.0.1", routerPort)));
        assertThat(envoy.awaitHealthyExtProc(1, healthWait())).isTrue();
        client = NettyChannelBuilder.forAddress("127.0.0.1", envoy.port()).usePlaintext()
                .maxInboundMessageSize(64 << 20).build();
    }

    private RouterServer startRouter() throws Exception {
        return RouterServer.start(ConfigLoader.parse("""
                server: {bindAddress: 127.0.0.1, port: %d, drainPeriod: %dms}
                pool:
                  static:
                    - {id: r1, grpc: "%s", metricsUrl: "%s", state: ready}
                    - {id: r2, grpc: "%s", metricsUrl: "%s", state: ready}
                """.formatted(routerPort, drainMillis(), r1.grpcAddress(), r1.metricsUrl(), r2.grpcAddress(),
                r2.metricsUrl()), Map.of()));
    }

    /** Long enough for the stand-in's health check (interval plus timeout) to see NOT_SERVING, twice over. */
    private long drainMillis() {
        EnvoyModel m = model != null ? model : EnvoyModel.of(bootstrapQuietly());
        return m.healthCheck().interval().plus(m.healthCheck().timeout()).multipliedBy(2).toMillis();
    }

    private static io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap bootstrapQuietly() {
        try {
            return EnvoyProtos.bootstrap(RepoFiles.read(RepoFiles.root().resolve("envoy/envoy.yaml")));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private Duration healthWait() {
        return model.healthCheck().interval().plus(model.healthCheck().timeout()).multipliedBy(15);
    }

    @AfterEach
    void stop() throws Exception {
        client.shutdownNow();
        envoy.close();
        router.close();
        r1.close();
        r2.close();
    }

    private Channel withSession(String session) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(RouteHeaders.SESSION_ID, Metadata.ASCII_STRING_MARSHALLER), session);
        return ClientInterceptors.intercept(client, MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private String config(Channel channel, String session) {
        return new String(ClientCalls.blockingUnaryCall(channel, ReplicaStub.CONFIG,
                CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), ReplicaStub.requestFor(session)),
                StandardCharsets.UTF_8);
    }

    @Test
    void aSessionIsPinnedWithAndWithoutTheHeaderAndEveryStreamEndsWhenAnswered() throws Exception {
        String session = UUID.randomUUID().toString();
        String home = config(withSession(session), session);
        for (int i = 0; i < 5; i++) {
            assertThat(config(withSession(session), session)).isEqualTo(home);
            assertThat(config(client, session)).as("from the body").isEqualTo(home);
        }
        assertThat(envoy.callsOf(session)).hasSize(11).allSatisfy(c -> {
            assertThat(c.status()).isEqualTo(Status.Code.OK);
            assertThat(c.details()).as("no reply of Envoy's own").isNull();
        });
    }

    @Test
    void anUploadLargerThanTheWindowWithoutTheHeaderIsRoutedAndArrivesWhole() throws Exception {
        String session = UUID.randomUUID().toString();
        byte[] big = ReplicaStub.requestFor(session, 3 * model.streamWindowBytes());
        CompletableFuture<String> answer = new CompletableFuture<>();
        StreamObserver<byte[]> out = ClientCalls.asyncClientStreamingCall(client.newCall(ReplicaStub.UPLOAD,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)), new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] value) {
                        answer.complete(new String(value, StandardCharsets.UTF_8));
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        out.onNext(big);
        out.onNext(ReplicaStub.requestFor(session, 1000));
        out.onCompleted();

        String[] parts = answer.get(60, TimeUnit.SECONDS).split(":");
        assertThat(Long.parseLong(parts[1])).isEqualTo(big.length + ReplicaStub.requestFor(session, 1000).length);
        assertThat(config(withSession(session), session)).isEqualTo(parts[0]);
        RecordedCall upload = envoy.callsOf(session).get(0);
        assertThat(upload.routedFromBody()).isTrue();
        assertThat(upload.status()).isEqualTo(Status.Code.OK);
    }

    @Test
    void aRouterStoppedInTheMiddleOfACallFailsNothingThatWasRunning() throws Exception {
        String session = UUID.randomUUID().toString();
        String home = config(withSession(session), session);
        int slowBefore = ReplicaStub.SLOW_CALLS_STARTED.get();
        CompletableFuture<String> slow = CompletableFuture.supplyAsync(() -> new String(ClientCalls.blockingUnaryCall(
                withSession(session), ReplicaStub.SLOW, CallOptions.DEFAULT.withDeadlineAfter(
                        ReplicaStub.SLOW_MILLIS * 4, TimeUnit.MILLISECONDS), ReplicaStub.requestFor(session)),
                StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ReplicaStub.SLOW_MILLIS);
        while (ReplicaStub.SLOW_CALLS_STARTED.get() == slowBefore && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(ReplicaStub.SLOW_CALLS_STARTED.get()).as("the slow call reached its replica").isGreaterThan(slowBefore);

        // What SIGTERM does: NOT_SERVING, answering for the drain period, then stopping.
        router.drainAndClose();
        assertThat(slow).as("the call outlived the router").isNotDone();

        assertThat(slow.get(ReplicaStub.SLOW_MILLIS * 4, TimeUnit.MILLISECONDS)).isEqualTo(home);
        RecordedCall call = envoy.callsOf(session).stream().filter(c -> c.method().equals("ExecutePlan"))
                .findFirst().orElseThrow();
        assertThat(call.status()).isEqualTo(Status.Code.OK);
        assertThat(call.details()).as("Envoy replied nothing of its own, such as a 500").isNull();
    }
}
