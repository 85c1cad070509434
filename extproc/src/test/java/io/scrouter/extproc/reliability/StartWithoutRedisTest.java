package io.scrouter.extproc.reliability;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Regression: a router whose Redis is unreachable at start used to fail in its constructor (the binding-feed
 * subscription connected eagerly) and linger without listening. It must start, answer every request with a
 * defined status, and pick Redis up when it appears: read the pool from it and write bindings to it.
 */
class StartWithoutRedisTest {

    @Test
    void routerStartsAndAnswersWhileRedisIsDownThenUsesItOnceUp() throws Exception {
        int port = RedisProcess.freePort();
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: %dms}
                redis: {address: "redis://127.0.0.1:%d", timeout: %dms, keyPrefix: late}
                pool: {pollInterval: 100ms}
                """.formatted(Patience.DECISION_DEADLINE.toMillis(), port, Patience.REDIS_TIMEOUT.toMillis());
        RouterConfig config = ConfigLoader.parse(yaml, Map.of());
        try (RouterServer rs = RouterServer.start(config)) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
            try {
                ExtProcClient envoy = new ExtProcClient(channel, Patience.decision(config));
                var answer = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
                // No pool could be read yet: a defined, retryable rejection rather than a hang.
                assertThat(ExtProcClient.rejectionCode(answer)).isEqualTo(Status.Code.UNAVAILABLE.value());
                assertThat(rs.poolRefresher().lastError()).isNotNull();
                assertThat(rs.pool().snapshot().size()).isZero();

                try (RedisProcess redis = RedisProcess.startOn(port)) {
                    Config c = new Config();
                    c.useSingleServer().setAddress(redis.address());
                    RedissonClient admin = Redisson.create(c);
                    try {
                        Replica replica = new Replica("late-0", "127.0.0.1:26001", null, ReplicaState.READY);
                        new RedisInstanceStore(admin, new RedisKeys("late")).publish(replica, Duration.ofMinutes(5))
                                .get(Patience.storeCall(config).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);

                        // The pool is read from the Redis that appeared...
                        Await.until("the router reads the pool from Redis", Patience.storeReturn(config)
                                .plus(Patience.poolChange(config)), () -> rs.pool().snapshot().get("late-0") != null);
                        // ...and a new session is bound in it.
                        String session = UUID.randomUUID().toString();
                        var routed = envoy.sendRetryingUnavailable(ExtProcClient.sparkCall("ExecutePlan", session),
                                Patience.storeReturn(config));
                        assertThat(ExtProcClient.upstreamOf(routed)).as("%s", routed).isEqualTo(replica.grpcAddress());
                        assertThat(Binding.decode(redis.command("GET", "late:session:" + session)).replicaId())
                                .isEqualTo("late-0");
                    } finally {
                        admin.shutdown();
                    }
                }
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
