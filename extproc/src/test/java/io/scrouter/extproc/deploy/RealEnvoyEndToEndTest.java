package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The shipped Envoy configs in a real Envoy, in front of two stand-in replicas and the real ext_proc
 * service. Runs only where an {@code envoy} binary or a Docker engine exists; skipped elsewhere.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RealEnvoyEndToEndTest {

    private static final Metadata.Key<String> SESSION =
            Metadata.Key.of(RouteHeaders.SESSION_ID, Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> FORGED_UPSTREAM =
            Metadata.Key.of(RouteHeaders.UPSTREAM, Metadata.ASCII_STRING_MARSHALLER);

    @TempDir
    Path work;

    private ReplicaStub r1;
    private ReplicaStub r2;
    private ExtProcProcess extProc;
    private Path extProcConfig;
    private int extProcPort;

    private boolean envoyAvailable;

    @BeforeAll
    void startReplicasAndService() throws Exception {
        envoyAvailable = RunningEnvoy.binaryOnPath() || RunningEnvoy.dockerAvailable();
        if (!envoyAvailable) {
            return;
        }
        r1 = ReplicaStub.start("r1");
        r2 = ReplicaStub.start("r2");
        extProcPort = freePort();
        Path config = work.resolve("scrouter.yaml");
        Files.writeString(config, """
                server:
                  bindAddress: 127.0.0.1
                  port: %d
                  # Envoy's health check (2 s + 0.5 s timeout in the shipped configs) sees NOT_SERVING first.
                  drainPeriod: 5s
                admin:
                  port: 0
                pool:
                  static:
                    - id: r1
                      grpc: %s
                      metricsUrl: %s
                      state: ready
                    - id: r2
                      grpc: %s
                      metricsUrl: %s
                      state: ready
                """.formatted(extProcPort, r1.grpcAddress(), r1.metricsUrl(), r2.grpcAddress(), r2.metricsUrl()));
        extProcConfig = config;
        extProc = ExtProcProcess.start(config, extProcPort, work.resolve("extproc.log"));
    }

    /** Per test rather than per class, so every skipped test is reported with the reason. */
    @BeforeEach
    void requireEnvoy() {
        assumeTrue(envoyAvailable, "skipped: needs an `envoy` binary on PATH or a Docker engine");
    }

    @AfterAll
    void stopAll() throws Exception {
        for (AutoCloseable running : new AutoCloseable[] {extProc, r1, r2}) {
            if (running != null) {
                running.close();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"envoy.yaml", "envoy-metadata.yaml"})
    void everySessionStaysOnOneReplicaAcrossCalls(String shipped) throws Exception {
        try (Envoyed envoy = Envoyed.start(shipped, work, extProcPort)) {
            Set<String> used = new HashSet<>();
            for (int s = 0; s < 12; s++) {
                String session = UUID.randomUUID().toString();
                Set<String> servedBy = new HashSet<>();
                for (int call = 0; call < 3; call++) {
                    servedBy.add(envoy.config(session, null));
                }
                assertThat(servedBy).as("session %s through %s", session, shipped).hasSize(1);
                used.addAll(servedBy);
            }
            assertThat(used).isSubsetOf(r1.id(), r2.id());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"envoy.yaml", "envoy-metadata.yaml"})
    void aRouteHeaderSetByTheClientIsIgnored(String shipped) throws Exception {
        try (Envoyed envoy = Envoyed.start(shipped, work, extProcPort)) {
            String session = UUID.randomUUID().toString();
            // Nothing listens on port 1: obeying the client would fail the call.
            String first = envoy.config(session, "127.0.0.1:1");
            assertThat(first).isIn(r1.id(), r2.id());

            ReplicaStub other = first.equals(r1.id()) ? r2 : r1;
            for (int call = 0; call < 5; call++) {
                assertThat(envoy.config(session, other.grpcAddress()))
                        .as("a client pointing its session at %s through %s", other.id(), shipped)
                        .isEqualTo(first);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"envoy.yaml", "envoy-metadata.yaml"})
    void aRequestWithoutTheSessionHeaderIsRoutedFromItsBody(String shipped) throws Exception {
        try (Envoyed envoy = Envoyed.start(shipped, work, extProcPort)) {
            String session = UUID.randomUUID().toString();
            String first = envoy.configWithoutHeader(session);
            assertThat(first).isIn(r1.id(), r2.id());
            for (int call = 0; call < 3; call++) {
                assertThat(envoy.config(session, null)).as("with the header now").isEqualTo(first);
                assertThat(envoy.configWithoutHeader(session)).isEqualTo(first);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"envoy.yaml", "envoy-metadata.yaml"})
    void anUploadLargerThanTheStreamWindowIsRoutedAndArrivesWhole(String shipped) throws Exception {
        try (Envoyed envoy = Envoyed.start(shipped, work, extProcPort)) {
            String session = UUID.randomUUID().toString();
            byte[] first = ReplicaStub.requestFor(session, 3 << 20);
            byte[] second = ReplicaStub.requestFor(session, 1 << 20);
            // No session header: BUFFERED_PARTIAL sends the first 1 MiB window to the router, the rest streams.
            String answer = envoy.upload(null, first, second);
            String[] parts = answer.split(":");
            assertThat(parts[0]).isIn(r1.id(), r2.id());
            assertThat(Long.parseLong(parts[1])).isEqualTo(first.length + (long) second.length);
            assertThat(envoy.config(session, null)).isEqualTo(parts[0]);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"envoy.yaml", "envoy-metadata.yaml"})
    void aRouterRestartedInTheMiddleOfACallFailsNothing(String shipped) throws Exception {
        try (Envoyed envoy = Envoyed.start(shipped, work, extProcPort)) {
            String session = UUID.randomUUID().toString();
            String home = envoy.config(session, null);
            java.util.concurrent.CompletableFuture<String> slow = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> envoy.slow(session));
            Thread.sleep(ReplicaStub.SLOW_MILLIS / 4);

            // SIGTERM while the call runs on the replica: the router drains and exits; its stream for that call
            // was closed with OK when it answered, so Envoy has nothing to fail.
            extProc.close();
            extProc = ExtProcProcess.start(extProcConfig, extProcPort, work.resolve("extproc-restarted.log"));

            assertThat(slow.get(ReplicaStub.SLOW_MILLIS * 4, TimeUnit.MILLISECONDS)).isEqualTo(home);
            envoy.awaitRouting(Duration.ofSeconds(30));
            assertThat(envoy.config(session, null)).as("the session after the restart").isEqualTo(home);
        }
    }

    @org.junit.jupiter.api.Test
    void theTlsBootstrapRoutesOverTls() throws Exception {
        Path cert = work.resolve("tls.crt");
        Path key = work.resolve("tls.key");
        Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", key.toString(), "-out", cert.toString()).redirectErrorStream(true).start();
        assumeTrue(openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0,
                "skipped: needs openssl to make a test certificate");
        try (Envoyed envoy = Envoyed.start("envoy-tls.yaml", work, extProcPort, cert, key)) {
            String session = UUID.randomUUID().toString();
            String first = envoy.config(session, null);
            assertThat(first).isIn(r1.id(), r2.id());
            assertThat(envoy.config(session, null)).isEqualTo(first);
        }
    }

    /** A running Envoy on a shipped config, and a client channel through it. */
    private record Envoyed(RunningEnvoy envoy, ManagedChannel channel) implements AutoCloseable {

        static Envoyed start(String shipped, Path work, int extProcPort) throws Exception {
            return start(shipped, work, extProcPort, null, null);
        }

        /** With {@code cert} and {@code key}, the TLS bootstrap serves that pair and the client trusts it. */
        static Envoyed start(String shipped, Path work, int extProcPort, Path cert, Path key) throws Exception {
            int listenerPort = freePort();
            int adminPort = freePort();
            Path config = work.resolve("envoy-" + listenerPort + ".yaml");
            String yaml = onLoopback(shipped, listenerPort, adminPort, extProcPort);
            if (cert != null) {
                yaml = yaml.replace("/etc/envoy/tls/tls.crt", cert.toString())
                        .replace("/etc/envoy/tls/tls.key", key.toString());
            }
            Files.writeString(config, yaml);
            RunningEnvoy envoy = RunningEnvoy.start(config, adminPort, work.resolve("envoy-" + listenerPort + ".log"));
            NettyChannelBuilder builder = NettyChannelBuilder.forAddress("127.0.0.1", listenerPort);
            if (cert != null) {
                builder.sslContext(io.grpc.netty.GrpcSslContexts.forClient().trustManager(cert.toFile()).build());
            } else {
                builder.usePlaintext();
            }
            ManagedChannel channel = builder.maxInboundMessageSize(64 << 20).build();
            Envoyed started = new Envoyed(envoy, channel);
            started.awaitRouting(Duration.ofSeconds(30));
            return started;
        }

        /** The shipped config, unchanged but for ports and addresses: Envoy, ext_proc and admin on loopback. */
        private static String onLoopback(String shipped, int listenerPort, int adminPort, int extProcPort)
                throws IOException {
            StandaloneConfig original = StandaloneConfig.load(RepoFiles.root().resolve("envoy").resolve(shipped));
            ObjectNode tree = original.tree().deepCopy();
            ((ObjectNode) tree.at("/admin/address/socket_address")).put("port_value", adminPort);
            ((ObjectNode) tree.at("/static_resources/listeners/0/address/socket_address"))
                    .put("address", "127.0.0.1").put("port_value", listenerPort);
            String extProcCluster = original.extProcCluster().getName();
            for (JsonNode cluster : tree.at("/static_resources/clusters")) {
                if (cluster.path("name").asText().equals(extProcCluster)) {
                    ((ObjectNode) cluster.at("/load_assignment/endpoints/0/lb_endpoints/0/endpoint/address"
                            + "/socket_address")).put("address", "127.0.0.1").put("port_value", extProcPort);
                }
            }
            String yaml = EnvoyProtos.YAML.writeValueAsString(tree);
            StandaloneConfig.parse("generated from " + shipped, yaml);
            return yaml;
        }

        /** The first requests may race the first ext_proc health check. */
        void awaitRouting(Duration patience) throws InterruptedException, IOException {
            Instant deadline = Instant.now().plus(patience);
            StatusRuntimeException last = null;
            while (Instant.now().isBefore(deadline)) {
                try {
                    config(UUID.randomUUID().toString(), null);
                    return;
                } catch (StatusRuntimeException e) {
                    last = e;
                    Thread.sleep(250);
                }
            }
            throw new IllegalStateException("no call routed within " + patience + " (last: " + last + "):\n"
                    + envoy.output());
        }

        /** One Config call; returns the id of the replica that served it. */
        String config(String session, String forgedUpstream) {
            Metadata headers = new Metadata();
            headers.put(SESSION, session);
            if (forgedUpstream != null) {
                headers.put(FORGED_UPSTREAM, forgedUpstream);
            }
            Channel intercepted = ClientInterceptors.intercept(channel,
                    MetadataUtils.newAttachHeadersInterceptor(headers));
            byte[] reply = ClientCalls.blockingUnaryCall(intercepted, ReplicaStub.CONFIG,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), ReplicaStub.requestFor(session));
            return new String(reply, StandardCharsets.UTF_8);
        }

        /** One Config call without the session header: the router reads the id from the body. */
        String configWithoutHeader(String session) {
            byte[] reply = ClientCalls.blockingUnaryCall(channel, ReplicaStub.CONFIG,
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), ReplicaStub.requestFor(session));
            return new String(reply, StandardCharsets.UTF_8);
        }

        /** The slow call, with the header: returns the id of the replica that served it. */
        String slow(String session) {
            Metadata headers = new Metadata();
            headers.put(SESSION, session);
            Channel intercepted = ClientInterceptors.intercept(channel,
                    MetadataUtils.newAttachHeadersInterceptor(headers));
            byte[] reply = ClientCalls.blockingUnaryCall(intercepted, ReplicaStub.SLOW,
                    CallOptions.DEFAULT.withDeadlineAfter(ReplicaStub.SLOW_MILLIS * 4, TimeUnit.MILLISECONDS),
                    ReplicaStub.requestFor(session));
            return new String(reply, StandardCharsets.UTF_8);
        }

        /** An upload of these messages (session header only if given); returns {@code <replica>:<bytes>}. */
        String upload(String session, byte[]... messages) throws Exception {
            Channel target = channel;
            if (session != null) {
                Metadata headers = new Metadata();
                headers.put(SESSION, session);
                target = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers));
            }
            java.util.concurrent.CompletableFuture<String> answer = new java.util.concurrent.CompletableFuture<>();
            var out = io.grpc.stub.ClientCalls.asyncClientStreamingCall(target.newCall(ReplicaStub.UPLOAD,
                    CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)), new io.grpc.stub.StreamObserver<byte[]>() {
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
            for (byte[] m : messages) {
                out.onNext(m);
            }
            out.onCompleted();
            return answer.get(60, TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            channel.shutdownNow();
            envoy.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

}
