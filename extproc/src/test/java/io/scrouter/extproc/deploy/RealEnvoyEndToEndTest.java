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

    /** A running Envoy on a shipped config, and a client channel through it. */
    private record Envoyed(RunningEnvoy envoy, ManagedChannel channel) implements AutoCloseable {

        static Envoyed start(String shipped, Path work, int extProcPort) throws Exception {
            int listenerPort = freePort();
            int adminPort = freePort();
            Path config = work.resolve("envoy-" + listenerPort + ".yaml");
            Files.writeString(config, onLoopback(shipped, listenerPort, adminPort, extProcPort));
            RunningEnvoy envoy = RunningEnvoy.start(config, adminPort, work.resolve("envoy-" + listenerPort + ".log"));
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", listenerPort).usePlaintext().build();
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
        private void awaitRouting(Duration patience) throws InterruptedException, IOException {
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
