package io.scrouter.extproc.publisher;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The publisher against a real redis-server and a stand-in replica (a real gRPC server plus Spark-shaped REST
 * endpoints), with a real router polling the same Redis: warming → ready → draining → gone, and the router
 * acting on each state.
 */
class ReplicaPublisherTest {

    private RedisProcess redis;
    private RedissonClient client;
    private SparkRestStandIn rest;
    private Server replicaGrpc;
    private RouterServer router;
    private RouterConfig config;
    private ManagedChannel channel;

    /**
     * The publisher's readiness checks with room (production's 1 s): these tests are about the states the
     * publisher announces, so a loaded machine must not turn a healthy stand-in into a failed check.
     */
    private static final Duration READINESS_TIMEOUT = Patience.of(Duration.ofSeconds(1));
    /** Redisson's default call timeout (3 s), which the test's own Redis client keeps. */
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(3);

    /** One publisher tick: both readiness checks (each within its timeout), then one write to Redis. */
    private static long tickMillis() {
        return Patience.of(READINESS_TIMEOUT.multipliedBy(2), CLIENT_TIMEOUT).toMillis();
    }

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        client = Redisson.create(c);
        rest = new SparkRestStandIn().load(0, 0, 2);
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0}
                redis: {address: "%s", timeout: 200ms, keyPrefix: pub}
                pool: {pollInterval: 100ms, departureGrace: 300ms}
                probe: {interval: 100ms, staleAfter: 5s}
                """.formatted(redis.address());
        config = ConfigLoader.parse(yaml, Map.of());
        router = RouterServer.start(config);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow();
        router.close();
        if (replicaGrpc != null) {
            replicaGrpc.shutdownNow();
        }
        rest.close();
        client.shutdown();
        redis.close();
    }

    private int startReplicaGrpc() throws Exception {
        replicaGrpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new HealthStatusManager().getHealthService()).build().start();
        return replicaGrpc.getPort();
    }

    private ReplicaState routerSees(String id) {
        var r = router.pool().snapshot().get(id);
        return r == null ? null : r.state();
    }

    @Test
    void statesGoWarmingReadyDrainingGoneAndTheRouterFollows() throws Exception {
        int grpcPort = startReplicaGrpc();
        String grpc = "127.0.0.1:" + grpcPort;
        RedisInstanceStore store = new RedisInstanceStore(client, new RedisKeys("pub"));
        ExtProcClient envoy = new ExtProcClient(channel, Patience.decision(config));
        // Each entry must outlive the step that follows its tick: the router sees the state within a poll, then
        // answers one request. Afterwards, the test waits for that lifetime to run out.
        Duration entryLifetime = Patience.poolChange(config).plus(Patience.decision(config));
        try (SparkReadiness readiness = new SparkReadiness(grpc, rest.url(), READINESS_TIMEOUT)) {
            ReplicaPublisher publisher = new ReplicaPublisher(store, "spark-0", grpc, rest.url(),
                    entryLifetime, readiness);

            // The driver's REST API is not up yet: warming, and the router places nothing there.
            rest.failing(true);
            assertThat(publisher.tick().get(tickMillis(), TimeUnit.MILLISECONDS)).isEqualTo(ReplicaState.WARMING);
            Await.until("router sees warming", Patience.poolChange(config), () -> routerSees("spark-0") == ReplicaState.WARMING);
            var refused = envoy.send(ExtProcClient.sparkCall("Config", UUID.randomUUID().toString()));
            assertThat(ExtProcClient.rejectionCode(refused)).isEqualTo(Status.Code.UNAVAILABLE.value());

            // Both gRPC and REST answer: ready, and new sessions go there.
            rest.failing(false);
            assertThat(publisher.tick().get(tickMillis(), TimeUnit.MILLISECONDS)).isEqualTo(ReplicaState.READY);
            Await.until("router sees ready", Patience.poolChange(config), () -> routerSees("spark-0") == ReplicaState.READY);
            String session = UUID.randomUUID().toString();
            assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("Config", session))))
                    .isEqualTo(grpc);

            // SIGTERM: draining keeps the session, refuses new ones.
            publisher.drain();
            assertThat(publisher.tick().get(tickMillis(), TimeUnit.MILLISECONDS)).isEqualTo(ReplicaState.DRAINING);
            Await.until("router sees draining", Patience.poolChange(config), () -> routerSees("spark-0") == ReplicaState.DRAINING);
            assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", session))))
                    .isEqualTo(grpc);
            var noNew = envoy.send(ExtProcClient.sparkCall("Config", UUID.randomUUID().toString()));
            assertThat(ExtProcClient.rejectionCode(noNew)).isEqualTo(Status.Code.UNAVAILABLE.value());

            // Renewals stop (the publisher exited or the pod died): the entry expires and the replica is gone.
            Await.until("router drops the expired replica", Patience.departure(config, entryLifetime), () -> routerSees("spark-0") == null);
            var lost = envoy.send(ExtProcClient.sparkCall("ExecutePlan", session));
            assertThat(ExtProcClient.rejectionCode(lost)).isEqualTo(Status.Code.FAILED_PRECONDITION.value());
        }
    }

    @Test
    void replicaWhoseGrpcPortIsClosedStaysWarmingWithTheReason() throws Exception {
        int closedPort = RedisProcess.freePort();
        String grpc = "127.0.0.1:" + closedPort;
        // A port that never opens fails the check whatever the machine's speed, after the whole timeout: no room
        // needed, and a short one keeps the test short.
        Duration closedPortTimeout = Duration.ofMillis(500);
        try (SparkReadiness readiness = new SparkReadiness(grpc, rest.url(), closedPortTimeout)) {
            assertThat(readiness.notReadyReason().get(tickMillis(), TimeUnit.MILLISECONDS)).contains("gRPC port");
            ReplicaPublisher publisher = new ReplicaPublisher(new RedisInstanceStore(client, new RedisKeys("pub")),
                    "spark-1", grpc, rest.url(), Duration.ofSeconds(5), readiness);
            assertThat(publisher.tick().get(tickMillis(), TimeUnit.MILLISECONDS)).isEqualTo(ReplicaState.WARMING);
            assertThat(redis.command("GET", "pub:replica:spark-1")).contains("\"state\":\"warming\"");
        }
    }

    @Test
    void readyReplicaThatStopsAnsweringGoesBackToWarmingAfterRepeatedFailures() throws Exception {
        String[] problem = {null};
        ReplicaPublisher publisher = new ReplicaPublisher(new RedisInstanceStore(client, new RedisKeys("pub")),
                "spark-2", "127.0.0.1:15002", rest.url(), Duration.ofSeconds(5),
                () -> java.util.concurrent.CompletableFuture.completedFuture(problem[0]));
        assertThat(publisher.tick().get()).isEqualTo(ReplicaState.READY);
        problem[0] = "monitoring REST API answered HTTP 503";
        for (int i = 1; i < ReplicaPublisher.FAILURES_TO_UNREADY; i++) {
            assertThat(publisher.tick().get()).as("one blip is tolerated").isEqualTo(ReplicaState.READY);
        }
        assertThat(publisher.tick().get()).isEqualTo(ReplicaState.WARMING);
        problem[0] = null;
        assertThat(publisher.tick().get()).isEqualTo(ReplicaState.READY);
    }
}
