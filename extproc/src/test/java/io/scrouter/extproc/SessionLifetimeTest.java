package io.scrouter.extproc;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
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
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How long a session's binding lives, against a real {@code redis-server} and real routers: a replica whose
 * driver changes under the same id (a new address, or restarted in place) ends its sessions with the clear
 * error rather than move them; a router that starts learns the bindings other routers made; a busy session
 * keeps its key past the idle TTL and an idle one loses it.
 */
class SessionLifetimeTest {

    private static final String PREFIX = "life";
    private static RedisProcess redis;
    private static RedissonClient admin;

    private final List<RouterServer> routers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private RedisInstanceStore instances;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        admin = Redisson.create(c);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        admin.shutdown();
        redis.close();
    }

    @BeforeEach
    void clean() throws Exception {
        assertThat(redis.command("FLUSHALL")).isEqualTo("+OK");
        instances = new RedisInstanceStore(admin, new RedisKeys(PREFIX));
    }

    @AfterEach
    void stop() {
        channels.forEach(ManagedChannel::shutdownNow);
        routers.forEach(RouterServer::close);
    }

    private RouterServer router(String sessions) throws Exception {
        RouterConfig config = ConfigLoader.parse("""
                server: {bindAddress: 127.0.0.1, port: 0, warmUp: false}
                redis: {address: "%s", timeout: 200ms, keyPrefix: %s}
                pool: {pollInterval: 100ms, departureGrace: 300ms}
                sessions: %s
                """.formatted(redis.address(), PREFIX, sessions), Map.of());
        RouterServer rs = RouterServer.start(config);
        routers.add(rs);
        return rs;
    }

    private ExtProcClient client(RouterServer rs) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, Patience.ANSWER);
    }

    /** Room for a busy machine over a period the configuration sets. */
    private static Duration patience(Duration period) {
        return period.multipliedBy(20).plusSeconds(2);
    }

    private static void await(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("not within " + within.toMillis() + " ms: " + what);
    }

    private static Binding stored(String session) {
        String value = admin.<String>getBucket(PREFIX + ":session:" + session, StringCodec.INSTANCE).get();
        return value == null ? null : Binding.decode(value);
    }

    private static long count(RouterServer rs, String replica) {
        try {
            return rs.sessions().countSessions(List.of(replica)).get(5, TimeUnit.SECONDS).get(replica);
        } catch (Exception e) {
            return -1;
        }
    }

    private void publish(Replica r) throws Exception {
        instances.publish(r, Duration.ofMinutes(5)).get(5, TimeUnit.SECONDS);
    }

    // ---- a replica whose driver changes -------------------------------------------------------------------

    @Test
    void aReplicaReRegisteredAtANewAddressEndsItsSessionsWithTheClearErrorNeverMovesThem() throws Exception {
        publish(new Replica("x", "127.0.0.1:30001", null, ReplicaState.READY));
        RouterServer rs = router("{idleTtl: 10m, refreshEvery: 1s}");
        ExtProcClient envoy = client(rs);
        String session = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", session))))
                .isEqualTo("127.0.0.1:30001");

        publish(new Replica("x", "127.0.0.1:30002", null, ReplicaState.READY));
        await("the pool has x at its new address", patience(rs.config().pool().pollInterval()),
                () -> rs.pool().snapshot().get("x").grpcAddress().equals("127.0.0.1:30002"));

        ProcessingResponse after = envoy.send(ExtProcClient.sparkCall("ExecutePlan", session));
        assertThat(ExtProcClient.rejectionCode(after)).isEqualTo(Status.Code.FAILED_PRECONDITION.value());
        assertThat(ExtProcClient.rejectionMessage(after)).contains("Start a new session");
        await("the session marked lost in the store", patience(rs.config().pool().pollInterval()),
                () -> stored(session) != null && stored(session).lost());
        // A new session is placed on the new driver.
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan",
                UUID.randomUUID().toString())))).isEqualTo("127.0.0.1:30002");
    }

    @Test
    void aDriverRestartedInPlaceEndsItsSessionsAndOnlyThose() throws Exception {
        publish(new Replica("y", "127.0.0.1:30003", null, ReplicaState.READY, "local-1000"));
        RouterServer a = router("{idleTtl: 10m, refreshEvery: 1s}");
        RouterServer b = router("{idleTtl: 10m, refreshEvery: 1s}");
        String before = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(client(a).send(ExtProcClient.sparkCall("ExecutePlan", before))))
                .isEqualTo("127.0.0.1:30003");
        assertThat(stored(before)).isEqualTo(Binding.to("y@local-1000"));

        // Same id, same address, a new Spark application: the driver restarted and lost every session.
        publish(new Replica("y", "127.0.0.1:30003", null, ReplicaState.READY, "local-2000"));
        for (RouterServer rs : List.of(a, b)) {
            await("the pool has y's new driver", patience(rs.config().pool().pollInterval()),
                    () -> "local-2000".equals(rs.pool().snapshot().get("y").instance()));
        }
        String after = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(client(b).send(ExtProcClient.sparkCall("ExecutePlan", after))))
                .isEqualTo("127.0.0.1:30003");

        for (RouterServer rs : List.of(a, b)) {
            ProcessingResponse r = client(rs).send(ExtProcClient.sparkCall("AnalyzePlan", before));
            assertThat(ExtProcClient.rejectionCode(r)).as("router %d", routers.indexOf(rs))
                    .isEqualTo(Status.Code.FAILED_PRECONDITION.value());
        }
        await("the old driver's session marked lost", patience(a.config().pool().pollInterval()),
                () -> stored(before).lost());
        assertThat(stored(after)).as("the new driver's session is left alone").isEqualTo(Binding.to("y@local-2000"));
        assertThat(ExtProcClient.upstreamOf(client(a).send(ExtProcClient.sparkCall("AnalyzePlan", after))))
                .isEqualTo("127.0.0.1:30003");
        assertThat(a.sessions().countSessions(List.of("y")).get(5, TimeUnit.SECONDS)).containsEntry("y", 1L);
    }

    // ---- the binding feed at start-up ---------------------------------------------------------------------

    @Test
    void aRouterThatStartsLearnsTheBindingsOtherRoutersMade() throws Exception {
        publish(new Replica("z", "127.0.0.1:30004", null, ReplicaState.READY));
        RouterServer first = router("{idleTtl: 10m, refreshEvery: 1s}");
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String s = UUID.randomUUID().toString();
            sessions.add(s);
            assertThat(ExtProcClient.upstreamOf(client(first).send(ExtProcClient.sparkCall("ExecutePlan", s))))
                    .isNotNull();
        }

        RouterServer late = router("{idleTtl: 10m, refreshEvery: 1s}");

        // From the binding feed, read once the pool is known: nothing of it may be skipped.
        await("the new router holds every binding in memory", patience(late.config().pool().pollInterval()),
                () -> sessions.stream().allMatch(s -> late.routing().nearCache().binding(s).isPresent()));
        assertThat(sessions).allSatisfy(s -> assertThat(late.routing().nearCache().binding(s))
                .contains(Binding.to("z@127.0.0.1:30004")));
    }

    @Test
    void aBindingToAReplicaThisRouterHasNotSeenYetIsKeptUntilItsPoolHasIt() throws Exception {
        // The late router reads the instance store only every few seconds; the quick one sees the new replica
        // first and binds a session to it, which the late one hears about before its pool has the replica.
        RouterServer quick = router("{idleTtl: 10m, refreshEvery: 1s}");
        RouterConfig slowPoll = ConfigLoader.parse("""
                server: {bindAddress: 127.0.0.1, port: 0, warmUp: false}
                redis: {address: "%s", timeout: 200ms, keyPrefix: %s}
                pool: {pollInterval: 3s, departureGrace: 300ms}
                """.formatted(redis.address(), PREFIX), Map.of());
        RouterServer late = RouterServer.start(slowPoll);
        routers.add(late);
        publish(new Replica("fresh", "127.0.0.1:30007", null, ReplicaState.READY));
        await("the quick router has the new replica", patience(quick.config().pool().pollInterval()),
                () -> quick.pool().snapshot().get("fresh") != null);
        String session = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(client(quick).send(ExtProcClient.sparkCall("ExecutePlan", session))))
                .isEqualTo("127.0.0.1:30007");
        assertThat(late.pool().snapshot().get("fresh")).as("the late router has not polled yet").isNull();

        await("the late router holds the binding once its pool has the replica",
                patience(late.config().pool().pollInterval()), () -> late.routing().nearCache().binding(session).isPresent());
        assertThat(late.routing().nearCache().binding(session)).contains(Binding.to("fresh@127.0.0.1:30007"));
    }

    // ---- idle expiry, both ways ---------------------------------------------------------------------------

    @Test
    void aBusySessionServedFromMemoryKeepsItsKeyPastTheIdleTtl() throws Exception {
        publish(new Replica("w", "127.0.0.1:30005", null, ReplicaState.READY));
        RouterServer rs = router("{idleTtl: 2s, refreshEvery: 400ms, releaseGrace: 1s}");
        ExtProcClient envoy = client(rs);
        String session = UUID.randomUUID().toString();
        long idleMillis = rs.config().sessions().idleTtl().toMillis();
        long every = rs.config().sessions().refreshEvery().toMillis() / 2;

        // Requests more often than refreshEvery for twice the idle TTL: all answered from the near-cache, and
        // the store's key is pushed back in the background.
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * idleMillis);
        while (System.nanoTime() < until) {
            assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("Config", session))))
                    .isEqualTo("127.0.0.1:30005");
            Thread.sleep(every);
        }
        assertThat(stored(session)).isEqualTo(Binding.to("w@127.0.0.1:30005"));
        long pttl = Long.parseLong(redis.command("PTTL", PREFIX + ":session:" + session).substring(1));
        assertThat(pttl).isPositive().isLessThanOrEqualTo(idleMillis);
        assertThat(rs.sessions().countSessions(List.of("w")).get(5, TimeUnit.SECONDS)).containsEntry("w", 1L);
    }

    @Test
    void anIdleSessionExpiresItsCountFallsAndItsNextRequestIsANewSession() throws Exception {
        publish(new Replica("v", "127.0.0.1:30006", null, ReplicaState.READY));
        RouterServer rs = router("{idleTtl: 2s, refreshEvery: 400ms, releaseGrace: 1s}");
        ExtProcClient envoy = client(rs);
        String session = UUID.randomUUID().toString();
        envoy.send(ExtProcClient.sparkCall("ExecutePlan", session));
        await("the session counted", patience(rs.config().pool().pollInterval()), () -> count(rs, "v") == 1L);

        await("the idle session's key expired", patience(rs.config().sessions().idleTtl()),
                () -> stored(session) == null);
        // The index's score is the expiry the router computed once the binding script answered, a moment after
        // Redis set the key's: the count falls within that moment, not at the key's expiry exactly.
        await("the expired session's count fell", patience(rs.config().pool().pollInterval()),
                () -> count(rs, "v") == 0L);
        await("the router forgot it too", patience(rs.config().sessions().idleTtl()),
                () -> rs.routing().nearCache().binding(session).isEmpty());

        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", session)))).isNotNull();
        assertThat(stored(session)).as("bound again as a new session").isNotNull();
        await("counted again", patience(rs.config().pool().pollInterval()), () -> count(rs, "v") == 1L);
    }
}
