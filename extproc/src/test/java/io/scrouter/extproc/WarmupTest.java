package io.scrouter.extproc;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.envoy.StreamLimits;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.RouterSettings;
import io.scrouter.extproc.routing.Routing;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Routings;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The warm-up's streams, sent by its own HTTP/2 client ({@link WarmupConnection}), reach the ext_proc service
 * and are answered by it, and the warm-up leaves no session behind.
 */
class WarmupTest {

    private static final RouterSettings SETTINGS = RouterSettings.defaults();

    @Test
    void everyWarmUpStreamIsAnsweredByTheServiceAndNothingIsBound() {
        ServerPool pool = new ServerPool();
        pool.replace(List.of(new Replica("a", "127.0.0.1:30001", null, ReplicaState.READY),
                new Replica("b", "127.0.0.1:30002", null, ReplicaState.READY)));
        InMemorySessionStore memory = new InMemorySessionStore(new SessionTtls(Duration.ofMinutes(30),
                Duration.ofHours(1), Duration.ofMinutes(10)), System::currentTimeMillis);
        Routing routing = Routings.over(pool, memory, SETTINGS, SystemTime.shared());

        // The shipped defaults: a 150 ms decision deadline, 1 MiB of buffered body.
        int answered = Warmup.run(routing.router(), new StreamLimits(150, 1 << 20),
                SystemTime.shared(), null);

        // Header and body mode, routes and rejections: every one of them gets a gRPC message back.
        assertThat(answered).isEqualTo(Warmup.STREAMS);
        assertThat(memory.size()).as("sessions bound by the warm-up's dry runs").isZero();
    }

    @Test
    void aStreamEndedWithoutAMessageIsNotCountedAsAnswered() throws Exception {
        // A gRPC server without the ext_proc service: it ends every Process stream with UNIMPLEMENTED, trailers only.
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new HealthStatusManager().getHealthService()).build().start();
        try (WarmupConnection connection = new WarmupConnection(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort()), 2,
                System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Warmup.BUDGET_MILLIS))) {
            List<String[]> headers = ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString());
            connection.send(List.of(ExtProcClient.headersRequest(headers)));
            connection.send(List.of(ExtProcClient.headersRequest(headers)));
            connection.awaitAllEnded();

            assertThat(connection.answered()).isZero();
        } finally {
            server.shutdownNow();
        }
    }
}
