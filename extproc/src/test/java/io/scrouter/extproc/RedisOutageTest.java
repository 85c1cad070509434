package io.scrouter.extproc;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.routing.Rendezvous;
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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis hung ({@code SIGSTOP}) under the router: every request is still answered (no timeout reaches Envoy),
 * known sessions keep their replica, the first unknown sessions are asked to retry rather than guessed, then
 * new sessions are placed by rendezvous hashing so two routers agree, and once Redis is back the fallback
 * placements are written to it.
 */
class RedisOutageTest {

    private RedisProcess redis;
    private RedissonClient admin;
    private final List<SparkRestStandIn> rest = new ArrayList<>();
    private final List<RouterServer> routers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<Replica> replicas = new ArrayList<>();
    private RouterConfig config;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        admin = Redisson.create(c);
        RedisInstanceStore instances = new RedisInstanceStore(admin, new RedisKeys("out"));
        for (int i = 0; i < 3; i++) {
            SparkRestStandIn s = new SparkRestStandIn().load(0, 0, 2);
            rest.add(s);
            Replica r = new Replica("r" + i, "127.0.0.1:" + (22000 + i), s.url(), ReplicaState.READY);
            replicas.add(r);
            instances.publish(r, Duration.ofMinutes(5)).get();
        }
    }

    @AfterEach
    void stop() throws Exception {
        channels.forEach(ManagedChannel::shutdownNow);
        routers.forEach(RouterServer::close);
        rest.forEach(SparkRestStandIn::close);
        admin.shutdown();
        redis.close();
    }

    /**
     * A router whose Redis and decision deadlines are production's with room ({@link Patience#REDIS_TIMEOUT}):
     * the subject is what a hung Redis does, not whether a loaded machine answers a healthy one in 50 ms.
     */
    private ExtProcClient router() throws Exception {
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: %dms}
                redis: {address: "%s", timeout: %dms, keyPrefix: out}
                pool: {pollInterval: 200ms}
                probe: {interval: 200ms, timeout: 1s, staleAfter: 5s}
                sessions: {idleTtl: 10m, refreshEvery: 200ms}
                """.formatted(Patience.DECISION_DEADLINE.toMillis(), redis.address(), Patience.REDIS_TIMEOUT.toMillis());
        config = ConfigLoader.parse(yaml, Map.of());
        RouterServer rs = RouterServer.start(config);
        routers.add(rs);
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, Patience.decision(config));
    }

    private static String route(ExtProcClient envoy, String method, String session) throws Exception {
        var r = envoy.send(ExtProcClient.sparkCall(method, session));
        assertThat(r.hasImmediateResponse()).as("request answered with a route, not a rejection: %s", r).isFalse();
        return ExtProcClient.upstreamOf(r);
    }

    /** As Spark's client does: a store blip's UNAVAILABLE is retried; then the answer must be a route. */
    private String routeRetrying(ExtProcClient envoy, String method, String session) throws Exception {
        var r = envoy.sendRetryingUnavailable(ExtProcClient.sparkCall(method, session), Patience.storeCall(config));
        assertThat(r.hasImmediateResponse()).as("request answered with a route, not a rejection: %s", r).isFalse();
        return ExtProcClient.upstreamOf(r);
    }

    @Test
    void hungRedisStillRoutesKnownAndNewSessionsAndRoutersAgreeAndRecover() throws Exception {
        ExtProcClient a = router();
        ExtProcClient b = router();
        Await.until("probes fresh", Patience.probeRound(config), () -> routers.stream().allMatch(rs -> replicas.stream()
                .allMatch(r -> rs.board().isFresh(r.id(), System.currentTimeMillis()))));
        String known = UUID.randomUUID().toString();
        // Bound while Redis is healthy; a blip on a loaded machine is retried, as the client would.
        String knownReplica = routeRetrying(a, "ExecutePlan", known);
        assertThat(routeRetrying(b, "ExecutePlan", known)).isEqualTo(knownReplica);

        redis.pause();
        try {
            for (int i = 0; i < 5; i++) {
                assertThat(route(a, "AnalyzePlan", known)).isEqualTo(knownReplica);
                assertThat(route(b, "AnalyzePlan", known)).isEqualTo(knownReplica);
            }
            // The first misses only look like a blip: they are answered UNAVAILABLE (retry), not guessed, until
            // repeated failures show the store is down.
            for (ExtProcClient envoy : List.of(a, b)) {
                Await.until("breaker open", Patience.breakerOpens(config), () -> {
                    try {
                        var r = envoy.send(ExtProcClient.sparkCall("Config", UUID.randomUUID().toString()));
                        if (r.hasImmediateResponse()) {
                            assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.UNAVAILABLE.value());
                            assertThat(ExtProcClient.rejectionMessage(r)).contains("retry");
                            return false;
                        }
                        return true;
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });
            }
            List<String> fresh = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                String session = UUID.randomUUID().toString();
                fresh.add(session);
                String viaA = route(a, "Config", session);
                String viaB = route(b, "Config", session);
                assertThat(viaA).isEqualTo(viaB)
                        .isEqualTo(Rendezvous.pick(session, replicas).grpcAddress());
                assertThat(route(a, "ExecutePlan", session)).isEqualTo(viaA);
            }

            redis.resume();
            // Traffic continues; within a few refresh intervals the fallback placements reach Redis.
            String sample = fresh.get(0);
            String expectedId = Rendezvous.pick(sample, replicas).id();
            Await.until("fallback placement written back to Redis", Patience.storeReturn(config), () -> {
                try {
                    route(a, "ExecutePlan", sample);
                    String value = redis.command("GET", "out:session:" + sample);
                    return !value.equals("$-1") && expectedId.equals(
                            io.scrouter.extproc.session.Binding.decode(value).replicaId());
                } catch (Exception e) {
                    return false;
                }
            });
        } finally {
            redis.resume();
        }
    }
}
