package io.scrouter.extproc;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.spark.SparkRestStandIn;
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
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The router as Envoy sees it: real gRPC over loopback (Netty), one {@code Process} stream per request with
 * headers in {@code raw_value}, two router instances sharing one real {@code redis-server}, and replicas
 * whose Spark REST endpoints report a load the test controls.
 */
class RouterEndToEndTest {

    private static final String PREFIX = "e2e";
    private static RedisProcess redis;
    private static RedissonClient admin;

    private final List<SparkRestStandIn> rest = new ArrayList<>();
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
        rest.forEach(SparkRestStandIn::close);
    }

    private Replica replica(String id, int grpcPort, SparkRestStandIn metrics, ReplicaState state) {
        return new Replica(id, "127.0.0.1:" + grpcPort, metrics.url(), state);
    }

    private SparkRestStandIn rest(long active, long pending, long slots) throws Exception {
        SparkRestStandIn s = new SparkRestStandIn().load(active, pending, slots);
        rest.add(s);
        return s;
    }

    /** The session's binding as Redis holds it, or null if it has none. */
    private Binding stored(String session) throws Exception {
        String value = admin.<String>getBucket(PREFIX + ":session:" + session, StringCodec.INSTANCE).get();
        return value == null ? null : Binding.decode(value);
    }

    /**
     * A router whose Redis and decision deadlines are production's with room ({@link Patience#REDIS_TIMEOUT}):
     * these tests are about routing, so a loaded machine must not turn a healthy Redis into a failed call (a
     * background write that fails is only retried on the session's next request).
     */
    private RouterServer router() throws Exception {
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: %dms}
                redis: {address: "%s", timeout: %dms, keyPrefix: %s}
                pool: {pollInterval: 100ms, departureGrace: 300ms}
                probe: {interval: 100ms, timeout: 1s, staleAfter: 3s}
                sessions: {idleTtl: 10m, refreshEvery: 1s}
                placement: {policy: seed, ewmaAlpha: 1.0}
                """.formatted(Patience.DECISION_DEADLINE.toMillis(), redis.address(), Patience.REDIS_TIMEOUT.toMillis(),
                PREFIX);
        RouterConfig config = ConfigLoader.parse(yaml, Map.of());
        RouterServer rs = RouterServer.start(config);
        routers.add(rs);
        return rs;
    }

    private ExtProcClient envoy(RouterServer rs) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, Patience.decision(rs.config()));
    }

    private static void awaitFresh(RouterServer rs, String... ids) {
        Await.until("fresh load samples for " + List.of(ids), Patience.probeRound(rs.config()), () -> {
            long now = System.currentTimeMillis();
            for (String id : ids) {
                if (!rs.board().isFresh(id, now)) {
                    return false;
                }
            }
            return true;
        });
    }

    private static void awaitUtilisation(RouterServer rs, String id, double expected) {
        Await.until(id + " utilisation " + expected, Patience.probeRound(rs.config()),
                () -> Math.abs(rs.board().get(id).utilisation() - expected) < 1e-9);
    }

    @Test
    void newSessionGoesToLeastLoadedReadyReplicaAndStaysThereWhenLoadsChange() throws Exception {
        SparkRestStandIn busy = rest(2, 6, 2);   // utilisation 4.0
        SparkRestStandIn idle = rest(0, 0, 2);   // 0.0
        SparkRestStandIn half = rest(1, 0, 2);   // 0.5
        SparkRestStandIn idleButWarming = rest(0, 0, 8);
        instances.publish(replica("busy", 15001, busy, ReplicaState.READY), Duration.ofMinutes(1)).get();
        instances.publish(replica("idle", 15002, idle, ReplicaState.READY), Duration.ofMinutes(1)).get();
        instances.publish(replica("half", 15003, half, ReplicaState.READY), Duration.ofMinutes(1)).get();
        instances.publish(replica("warming", 15004, idleButWarming, ReplicaState.WARMING), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        awaitFresh(rs, "busy", "idle", "half", "warming");
        ExtProcClient envoy = envoy(rs);

        String session = UUID.randomUUID().toString();
        ProcessingResponse first = envoy.send(ExtProcClient.sparkCall("Config", session));
        assertThat(ExtProcClient.upstreamOf(first)).isEqualTo("127.0.0.1:15002");
        // The header is overwritten, never appended, and the same address travels as dynamic metadata.
        var option = first.getRequestHeaders().getResponse().getHeaderMutation().getSetHeaders(0);
        assertThat(option.getAppendAction().name()).isEqualTo("OVERWRITE_IF_EXISTS_OR_ADD");
        assertThat(option.getHeader().getValue()).isEmpty();
        assertThat(first.getDynamicMetadata().getFieldsOrThrow(RouteHeaders.METADATA_NAMESPACE).getStructValue()
                .getFieldsOrThrow(RouteHeaders.METADATA_UPSTREAM_KEY).getStringValue()).isEqualTo("127.0.0.1:15002");

        // Now the chosen replica becomes the busiest and another the idlest: the session must not move.
        idle.load(2, 20, 2);
        busy.load(0, 0, 2);
        awaitUtilisation(rs, "idle", 11.0);
        awaitUtilisation(rs, "busy", 0.0);
        for (String method : List.of("AnalyzePlan", "ExecutePlan", "ReattachExecute", "ReleaseExecute",
                "AddArtifacts", "ArtifactStatus", "Interrupt", "FetchErrorDetails", "CloneSession", "GetStatus",
                "Config")) {
            assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall(method, session))))
                    .as(method).isEqualTo("127.0.0.1:15002");
        }
        // ...while a new session now goes to the replica that became idle.
        String other = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("Config", other))))
                .isEqualTo("127.0.0.1:15001");

        // The binding is in Redis, one key per session, with an idle expiry.
        assertThat(stored(session)).as("bound to the idle replica's driver")
                .isEqualTo(Binding.to("idle@127.0.0.1:15002"));
        long pttl = Long.parseLong(redis.command("PTTL", PREFIX + ":session:" + session).substring(1));
        assertThat(pttl).isBetween(1L, Duration.ofMinutes(10).toMillis());
    }

    @Test
    void twoRoutersSharingRedisAgreeOnEveryNewSessionUnderConcurrency() throws Exception {
        // Equal loads: each router's own choice is a coin toss, so only the store can make them agree.
        for (int i = 0; i < 4; i++) {
            SparkRestStandIn s = rest(0, 0, 2);
            instances.publish(replica("r" + i, 16000 + i, s, ReplicaState.READY), Duration.ofMinutes(1)).get();
        }
        RouterServer a = router();
        RouterServer b = router();
        awaitFresh(a, "r0", "r1", "r2", "r3");
        awaitFresh(b, "r0", "r1", "r2", "r3");
        ExtProcClient envoyA = envoy(a);
        ExtProcClient envoyB = envoy(b);

        int trials = 300;
        int disagreements = 0;
        Set<String> seen = new java.util.HashSet<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<String[]>> results = new ArrayList<>();
            for (int i = 0; i < trials; i++) {
                String session = UUID.randomUUID().toString();
                Future<String> fa = pool.submit(() -> ExtProcClient.upstreamOf(
                        envoyA.send(ExtProcClient.sparkCall("ExecutePlan", session))));
                Future<String> fb = pool.submit(() -> ExtProcClient.upstreamOf(
                        envoyB.send(ExtProcClient.sparkCall("ExecutePlan", session))));
                results.add(pool.submit(() -> new String[] {fa.get(), fb.get()}));
            }
            for (Future<String[]> f : results) {
                String[] pair = f.get(30, TimeUnit.SECONDS);
                assertThat(pair[0]).isNotNull();
                seen.add(pair[0]);
                if (!pair[0].equals(pair[1])) {
                    disagreements++;
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(disagreements).isZero();
        // Ties were broken at random, so sessions spread instead of herding on one replica.
        assertThat(seen).hasSizeGreaterThan(1);
    }

    @Test
    void replicaRemovedFromInstanceStoreGetsNoNewSessionsAndItsSessionsGetSessionLost() throws Exception {
        SparkRestStandIn s1 = rest(0, 0, 2);
        SparkRestStandIn s2 = rest(1, 0, 2);
        instances.publish(replica("keep", 17001, s2, ReplicaState.READY), Duration.ofMinutes(1)).get();
        instances.publish(replica("gone", 17002, s1, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer a = router();
        RouterServer b = router();
        awaitFresh(a, "keep", "gone");
        ExtProcClient envoyA = envoy(a);
        ExtProcClient envoyB = envoy(b);

        String pinned = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(envoyA.send(ExtProcClient.sparkCall("Config", pinned))))
                .isEqualTo("127.0.0.1:17002");
        instances.remove("gone").get();
        Await.until("both routers drop the replica", Patience.poolChange(a.config()), () -> a.pool().snapshot().get("gone") == null
                && b.pool().snapshot().get("gone") == null);

        for (ExtProcClient envoy : List.of(envoyA, envoyB)) {
            ProcessingResponse r = envoy.send(ExtProcClient.sparkCall("ExecutePlan", pinned));
            assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.FAILED_PRECONDITION.value());
            assertThat(ExtProcClient.rejectionMessage(r)).contains("'gone'", "left the pool",
                    "Start a new session");
        }
        // Marking the sessions lost is a background call made when the replica leaves the pool.
        Await.until("tombstone in redis", Patience.backgroundWrite(a.config()), () -> {
            try {
                Binding held = stored(pinned);
                return held != null && held.lost() && held.replicaId().equals("gone");
            } catch (Exception e) {
                return false;
            }
        });
        for (int i = 0; i < 20; i++) {
            String session = UUID.randomUUID().toString();
            assertThat(ExtProcClient.upstreamOf(envoyB.send(ExtProcClient.sparkCall("Config", session))))
                    .isEqualTo("127.0.0.1:17001");
        }
    }

    @Test
    void releaseSessionKeepsLateCallsOnTheReplicaAndStopsCountingTheSession() throws Exception {
        SparkRestStandIn s0 = rest(0, 0, 2);
        SparkRestStandIn s1 = rest(0, 0, 2);
        instances.publish(replica("rel-a", 18001, s0, ReplicaState.READY), Duration.ofMinutes(1)).get();
        instances.publish(replica("rel-b", 18002, s1, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        awaitFresh(rs, "rel-a");
        awaitFresh(rs, "rel-b");
        ExtProcClient envoy = envoy(rs);
        String session = UUID.randomUUID().toString();
        String home = ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", session)));
        String homeId = home.endsWith(":18001") ? "rel-a" : "rel-b";
        assertThat(stored(session).replicaId()).isEqualTo(homeId);

        ProcessingResponse release = envoy.send(ExtProcClient.sparkCall("ReleaseSession", session));
        assertThat(ExtProcClient.upstreamOf(release)).isEqualTo(home);
        Await.until("binding marked released", Patience.storeCall(rs.config()), () -> {
            try {
                Binding b = stored(session);
                return b.released() && b.replicaId().equals(homeId);
            } catch (Exception e) {
                return false;
            }
        });
        // The router drops the session from its replica's index once the release script has answered; the binding
        // can show released in Redis a moment before that, so the count is awaited for one more store call.
        Await.untilChecked("a released session no longer counts", Patience.storeCall(rs.config()).multipliedBy(2),
                () -> rs.sessions().countSessions(List.of(homeId)).get(5, TimeUnit.SECONDS).get(homeId) == 0L);

        // The client's asynchronous ReleaseExecute, after its ReleaseSession, reaches the same replica, from this
        // router's memory and from a router that has to ask the store.
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ReleaseExecute", session))))
                .isEqualTo(home);
        RouterServer other = router();
        assertThat(ExtProcClient.upstreamOf(envoy(other).send(ExtProcClient.sparkCall("ReleaseExecute", session))))
                .isEqualTo(home);
        assertThat(stored(session).released()).isTrue();

        // Work after a release (the owner, when someone else released its id) revives it in place: at once on a
        // router that knew it was released, within sessions.refreshEvery on one that still had it as live.
        ExtProcClient owner = envoy(other);
        Await.until("the binding revived in the store",
                Patience.storeCall(rs.config()).plus(Patience.of(rs.config().sessions().refreshEvery())), () -> {
            try {
                assertThat(ExtProcClient.upstreamOf(owner.send(ExtProcClient.sparkCall("ExecutePlan", session))))
                        .isEqualTo(home);
                return stored(session).equals(Binding.to(homeId + "@" + home));
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void aBodyAsLargeAsEnvoysWindowIsRoutedAndALargerOneGetsAClearErrorNotAReset() throws Exception {
        SparkRestStandIn s = rest(0, 0, 2);
        instances.publish(replica("body", 18004, s, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        ExtProcClient envoy = envoy(rs);
        int window = rs.config().server().maxBufferedBodyBytes();

        // What BUFFERED_PARTIAL sends for a 1 MiB window: what crossed it, up to one 16 KiB frame more.
        String session = UUID.randomUUID().toString();
        List<ProcessingResponse> fits = List.of();
        // As Spark's client does, retry UNAVAILABLE (a decision past its deadline on a busy machine).
        for (int attempt = 0; attempt < 5; attempt++) {
            fits = envoy.exchange(List.of(
                    ExtProcClient.headersRequest(ExtProcClient.sparkCall("AddArtifacts", null)),
                    io.scrouter.extproc.envoy.SparkRequestBodies.body(
                            io.scrouter.extproc.envoy.SparkRequestBodies.framed(session, window + (16 << 10)), false)));
            if (ExtProcClient.rejectionCode(fits.get(1)) != Status.Code.UNAVAILABLE.value()) {
                break;
            }
        }
        assertThat(fits.get(1).getRequestBody().getResponse().getHeaderMutation().getSetHeadersList())
                .as("routed on the body answer: %s", fits.get(1).hasImmediateResponse()
                        ? ExtProcClient.rejectionMessage(fits.get(1)) : fits.get(1)).isNotEmpty();

        // A gateway whose window was left at Envoy's 256 MiB default: 6 MiB in one message. gRPC's default 4 MiB
        // limit would reset the stream, which Envoy turns into an unexplained 500.
        List<ProcessingResponse> tooLarge = envoy.exchange(List.of(
                ExtProcClient.headersRequest(ExtProcClient.sparkCall("AddArtifacts", null)),
                io.scrouter.extproc.envoy.SparkRequestBodies.body(
                        io.scrouter.extproc.envoy.SparkRequestBodies.framed(UUID.randomUUID().toString(), 6 << 20),
                        false)));
        assertThat(ExtProcClient.rejectionCode(tooLarge.get(1))).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
        assertThat(ExtProcClient.rejectionMessage(tooLarge.get(1))).contains("initial_stream_window_size");
    }

    @Test
    void cleanUpCallOfASessionNoRouterKnowsBindsNothing() throws Exception {
        SparkRestStandIn s = rest(0, 0, 2);
        instances.publish(replica("only", 18003, s, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        awaitFresh(rs, "only");
        String session = UUID.randomUUID().toString();

        ProcessingResponse late = envoy(rs).send(ExtProcClient.sparkCall("ReleaseExecute", session));

        assertThat(ExtProcClient.rejectionCode(late)).isEqualTo(Status.Code.NOT_FOUND.value());
        assertThat(ExtProcClient.rejectionMessage(late)).contains("released or expired");
        assertThat(redis.command("EXISTS", PREFIX + ":session:" + session)).isEqualTo(":0");
    }

    @Test
    void badInputGetsItsDocumentedStatusAndClientRouteHeaderNeverSurvives() throws Exception {
        SparkRestStandIn s = rest(0, 0, 2);
        instances.publish(replica("only", 19001, s, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        awaitFresh(rs, "only");
        ExtProcClient envoy = envoy(rs);

        // No header and no body to read the id from (headers end the stream): rejected with how to fix it.
        var headersOnly = ExtProcClient.headersRequest(ExtProcClient.sparkCall("ExecutePlan", null)).toBuilder();
        headersOnly.getRequestHeadersBuilder().setEndOfStream(true);
        ProcessingResponse missing = envoy.exchange(List.of(headersOnly.build())).get(0);
        assertThat(ExtProcClient.rejectionCode(missing)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(missing)).contains(RouteHeaders.SESSION_ID, "sc://", "session_id=");

        // No header but a body to come: the router asks Envoy for the body (the id is read from it).
        ProcessingResponse askBody = envoy.send(ExtProcClient.sparkCall("ExecutePlan", null));
        assertThat(askBody.hasImmediateResponse()).isFalse();
        assertThat(ExtProcClient.upstreamOf(askBody)).isNull();
        assertThat(askBody.getModeOverride().getRequestBodyMode().name()).isEqualTo("BUFFERED_PARTIAL");

        ProcessingResponse malformed = envoy.send(ExtProcClient.sparkCall("ExecutePlan", "not-a-uuid\r\nx: y"));
        assertThat(ExtProcClient.rejectionCode(malformed)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(malformed)).contains("is not a UUID").doesNotContain("\r");

        ProcessingResponse huge = envoy.send(ExtProcClient.sparkCall("ExecutePlan", "a".repeat(10_000)));
        assertThat(ExtProcClient.rejectionCode(huge)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(huge)).contains("too long");

        List<String[]> twice = ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString());
        twice.add(new String[] {RouteHeaders.SESSION_ID, UUID.randomUUID().toString()});
        assertThat(ExtProcClient.rejectionCode(envoy.send(twice))).isEqualTo(Status.Code.INVALID_ARGUMENT.value());

        List<String[]> notSpark = ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString());
        notSpark.set(3, new String[] {":path", "/grpc.health.v1.Health/Check"});
        ProcessingResponse wrongPath = envoy.send(notSpark);
        assertThat(ExtProcClient.rejectionCode(wrongPath)).isEqualTo(Status.Code.UNIMPLEMENTED.value());
        assertThat(ExtProcClient.rejectionMessage(wrongPath)).contains("/spark.connect.SparkConnectService/");

        // A client naming its own upstream: the answer overwrites it with the pool's address.
        List<String[]> forged = ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString());
        forged.add(new String[] {RouteHeaders.UPSTREAM, "169.254.169.254:80"});
        ProcessingResponse r = envoy.send(forged);
        assertThat(ExtProcClient.upstreamOf(r)).isEqualTo("127.0.0.1:19001");
        assertThat(r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeaders(0).getAppendAction().name())
                .isEqualTo("OVERWRITE_IF_EXISTS_OR_ADD");

        // Only warming and draining replicas: no new session can be placed.
        instances.publish(replica("only", 19001, s, ReplicaState.DRAINING), Duration.ofMinutes(1)).get();
        Await.until("draining seen", Patience.poolChange(rs.config()), () -> rs.pool().snapshot().ready().isEmpty());
        ProcessingResponse none = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
        assertThat(ExtProcClient.rejectionCode(none)).isEqualTo(Status.Code.UNAVAILABLE.value());
        assertThat(ExtProcClient.rejectionMessage(none)).contains("no Spark Connect replica can take a new session");
    }

    @Test
    void drainingReplicaKeepsItsSessionsButGetsNoNewOnes() throws Exception {
        SparkRestStandIn idle = rest(0, 0, 2);
        SparkRestStandIn busy = rest(2, 2, 2);
        instances.publish(replica("idle", 20001, idle, ReplicaState.READY), Duration.ofMinutes(1)).get();
        instances.publish(replica("busy", 20002, busy, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        awaitFresh(rs, "idle", "busy");
        ExtProcClient envoy = envoy(rs);
        String session = UUID.randomUUID().toString();
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("Config", session))))
                .isEqualTo("127.0.0.1:20001");

        instances.publish(replica("idle", 20001, idle, ReplicaState.DRAINING), Duration.ofMinutes(1)).get();
        Await.until("draining seen", Patience.poolChange(rs.config()),
                () -> rs.pool().snapshot().get("idle").state() == ReplicaState.DRAINING);
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", session))))
                .isEqualTo("127.0.0.1:20001");
        for (int i = 0; i < 10; i++) {
            assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("Config",
                    UUID.randomUUID().toString())))).isEqualTo("127.0.0.1:20002");
        }
    }

    @Test
    void headerValueFieldIsReadWhenRawValueIsEmpty() throws Exception {
        SparkRestStandIn s = rest(0, 0, 2);
        instances.publish(replica("only", 21001, s, ReplicaState.READY), Duration.ofMinutes(1)).get();
        RouterServer rs = router();
        ExtProcClient envoy = envoy(rs);
        String session = UUID.randomUUID().toString();
        var request = ExtProcClient.headersRequest(ExtProcClient.sparkCall("Config", null)).toBuilder();
        request.getRequestHeadersBuilder().getHeadersBuilder().addHeaders(
                io.envoyproxy.envoy.config.core.v3.HeaderValue.newBuilder().setKey(RouteHeaders.SESSION_ID)
                        .setValue(session));
        ProcessingResponse r = envoy.exchange(List.of(request.build())).get(0);
        assertThat(ExtProcClient.upstreamOf(r)).isEqualTo("127.0.0.1:21001");
        assertThat(stored(session).replicaId()).isEqualTo("only");
    }
}
