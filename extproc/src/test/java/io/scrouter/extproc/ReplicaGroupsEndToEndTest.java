package io.scrouter.extproc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.routing.ReplicaGroups;
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

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replica groups as Envoy sees them: two teams and a shared tier published to a real {@code redis-server}, routers
 * configured with a {@code groups} section, and requests carrying the group header Envoy sets from a verified
 * token. Each test is one promise of the feature: placement stays inside the request's groups, in their fallback
 * order; a session id never crosses into another team's replicas, through a router's memory or through the
 * store; a full group answers RESOURCE_EXHAUSTED; a request without a usable group is refused.
 */
class ReplicaGroupsEndToEndTest {

    private static final String PREFIX = "groups";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static RedisProcess redis;
    private static RedissonClient admin;

    private final List<SparkRestStandIn> rest = new ArrayList<>();
    private final List<RouterServer> routers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    /** Replica id by the address the router answers with. */
    private final Map<String, String> idByAddress = new HashMap<>();
    private RedisInstanceStore instances;
    private int nextPort = 19100;

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

    /** Publishes a ready replica of {@code group} whose Spark REST API reports {@code active} of 2 slots busy. */
    private void replica(String id, String group, long active) throws Exception {
        SparkRestStandIn metrics = new SparkRestStandIn().load(active, 0, 2);
        rest.add(metrics);
        String address = "127.0.0.1:" + nextPort++;
        instances.publish(new Replica(id, address, metrics.url(), ReplicaState.READY, null, group),
                Duration.ofMinutes(1)).get();
        idByAddress.put(address, id);
    }

    /** A router with production's deadlines (with room for a loaded machine) and the given groups section. */
    private RouterServer router(String groups) throws Exception {
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: %dms}
                admin: {bindAddress: 127.0.0.1, port: 0}
                metrics: {bindAddress: 127.0.0.1, port: 0}
                redis: {address: "%s", timeout: %dms, keyPrefix: %s}
                pool: {pollInterval: 100ms, departureGrace: 300ms}
                probe: {interval: 100ms, timeout: 1s, staleAfter: 3s}
                sessions: {idleTtl: 10m, refreshEvery: 1s}
                placement: {policy: seed, ewmaAlpha: 1.0}
                %s
                """.formatted(Patience.DECISION_DEADLINE.toMillis(), redis.address(), Patience.REDIS_TIMEOUT.toMillis(),
                PREFIX, groups);
        RouterServer rs = RouterServer.start(ConfigLoader.parse(yaml, Map.of()));
        routers.add(rs);
        return rs;
    }

    private ExtProcClient envoy(RouterServer rs) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, Patience.decision(rs.config()));
    }

    private static void awaitPool(RouterServer rs, String... ids) {
        Await.until("fresh load samples for " + List.of(ids),
                Patience.poolChange(rs.config()).plus(Patience.probeRound(rs.config())), () -> {
                    long now = System.currentTimeMillis();
                    for (String id : ids) {
                        if (rs.pool().snapshot().get(id) == null || !rs.board().isFresh(id, now)) {
                            return false;
                        }
                    }
                    return true;
                });
    }

    /** A Spark call of {@code session} carrying the group header as Envoy sets it (none when null). */
    private static List<String[]> call(String method, String session, String group) {
        List<String[]> headers = ExtProcClient.sparkCall(method, session);
        if (group != null) {
            headers.add(new String[] {ReplicaGroups.HEADER, group});
        }
        return headers;
    }

    /** The replica the router sent the call to, by id; fails the test on a rejection. */
    private String routedTo(ExtProcClient envoy, String method, String session, String group) throws Exception {
        ProcessingResponse r = envoy.send(call(method, session, group));
        assertThat(ExtProcClient.rejectionCode(r)).as("rejected: %s", r.hasImmediateResponse()
                ? ExtProcClient.rejectionMessage(r) : "").isEqualTo(-1);
        String id = idByAddress.get(ExtProcClient.upstreamOf(r));
        assertThat(id).as("routed to a published replica").isNotNull();
        return id;
    }

    private Binding stored(String session) {
        String value = admin.<String>getBucket(PREFIX + ":session:" + session, StringCodec.INSTANCE).get();
        return value == null ? null : Binding.decode(value);
    }

    private static JsonNode adminPool(RouterServer rs) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + rs.adminPort() + "/api/pool")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static String scrape(RouterServer rs) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + rs.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void newSessionsStayInsideTheirTeamsGroupEvenWhenAnotherTeamsReplicaIsIdler() throws Exception {
        replica("a1", "team-a", 2);
        replica("a2", "team-a", 1);
        replica("b1", "team-b", 0);
        RouterServer rs = router("groups: {allow: {team-a: [team-a], team-b: [team-b]}}");
        awaitPool(rs, "a1", "a2", "b1");
        ExtProcClient envoy = envoy(rs);

        for (int i = 0; i < 12; i++) {
            String session = UUID.randomUUID().toString();
            assertThat(routedTo(envoy, "ExecutePlan", session, "team-a")).as("team-a session %d", i)
                    .isIn("a1", "a2");
            assertThat(stored(session).replicaId()).isIn("a1", "a2");
            assertThat(routedTo(envoy, "ExecutePlan", UUID.randomUUID().toString(), "team-b")).isEqualTo("b1");
        }
        // Within the group, the policy still chooses by load: the idler team-a replica gets the first session.
        RouterServer fresh = router("groups: {allow: {team-a: [team-a], team-b: [team-b]}}");
        awaitPool(fresh, "a1", "a2", "b1");
        assertThat(routedTo(envoy(fresh), "Config", UUID.randomUUID().toString(), "team-a")).isEqualTo("a2");
    }

    @Test
    void aFullGroupFallsBackInTheConfiguredOrderThenAnswersResourceExhausted() throws Exception {
        replica("a1", "team-a", 2);    // team-a is busy, shared is idle: order must win over load
        replica("s1", "shared", 0);
        RouterServer rs = router("""
                groups:
                  allow: {team-a: [team-a, shared], team-b: [shared]}
                  maxSessionsPerReplica: {team-a: 2, shared: 1}
                """);
        awaitPool(rs, "a1", "s1");
        ExtProcClient envoy = envoy(rs);

        List<String> landed = new ArrayList<>();
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            sessions.add(UUID.randomUUID().toString());
            landed.add(routedTo(envoy, "ExecutePlan", sessions.get(i), "team-a"));
        }
        assertThat(landed).containsExactly("a1", "a1", "s1");

        String refused = UUID.randomUUID().toString();
        ProcessingResponse full = envoy.send(call("ExecutePlan", refused, "team-a"));
        assertThat(ExtProcClient.rejectionCode(full)).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
        assertThat(ExtProcClient.rejectionMessage(full)).contains("team-a", "retry later", "capacity");
        assertThat(stored(refused)).as("a refused session is not bound").isNull();
        // team-b may use only the shared replica, which is full too.
        assertThat(ExtProcClient.rejectionCode(envoy.send(call("Config", UUID.randomUUID().toString(), "team-b"))))
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());

        // Operators see it per group, in the admin view and in the metrics.
        JsonNode groups = adminPool(rs).path("groups");
        Map<String, JsonNode> byName = new HashMap<>();
        groups.forEach(g -> byName.put(g.path("group").asText(), g));
        assertThat(byName.get("team-a").path("activeSessions").asLong()).isEqualTo(2);
        assertThat(byName.get("team-a").path("maxSessionsPerReplica").asLong()).isEqualTo(2);
        assertThat(byName.get("team-a").path("fullRefusals").asLong()).isEqualTo(1);
        assertThat(byName.get("shared").path("activeSessions").asLong()).isEqualTo(1);
        assertThat(byName.get("team-b").path("fullRefusals").asLong()).isEqualTo(1);
        String metrics = scrape(rs);
        assertThat(metrics).contains("scrouter_group_full_total{group=\"team-a\"} 1.0",
                "scrouter_group_active_sessions{group=\"team-a\"} 2.0",
                "scrouter_replica_group{group=\"shared\",replica=\"s1\"} 1.0",
                "scrouter_decisions_total{outcome=\"rejected\",reason=\"group_full\"} 2.0");

        // Known sessions are never capped: a full group still serves the sessions it holds.
        assertThat(routedTo(envoy, "ExecutePlan", sessions.get(0), "team-a")).isEqualTo("a1");
        assertThat(routedTo(envoy, "ExecutePlan", sessions.get(2), "team-a")).isEqualTo("s1");
    }

    @Test
    void aSessionIdNeverReachesAnotherTeamsReplicaThroughMemoryOrTheStore() throws Exception {
        replica("a1", "team-a", 0);
        replica("b1", "team-b", 0);
        String groups = "groups: {allow: {team-a: [team-a], team-b: [team-b]}}";
        RouterServer placing = router(groups);
        RouterServer other = router(groups);
        awaitPool(placing, "a1", "b1");
        awaitPool(other, "a1", "b1");
        ExtProcClient envoyPlacing = envoy(placing);
        ExtProcClient envoyOther = envoy(other);

        String session = UUID.randomUUID().toString();
        assertThat(routedTo(envoyPlacing, "ExecutePlan", session, "team-a")).isEqualTo("a1");
        Await.until("the binding in the store", Patience.storeCall(placing.config()),
                () -> stored(session) != null);

        // Through the router that placed it (near cache) and through one that must ask the store.
        for (ExtProcClient envoy : List.of(envoyPlacing, envoyOther)) {
            for (String method : List.of("ExecutePlan", "ReattachExecute", "ReleaseSession")) {
                ProcessingResponse r = envoy.send(call(method, session, "team-b"));
                assertThat(ExtProcClient.rejectionCode(r)).as(method)
                        .isEqualTo(Status.Code.PERMISSION_DENIED.value());
                assertThat(ExtProcClient.rejectionMessage(r)).contains(session, "team-a", "team-b",
                        "start a new session");
            }
        }
        // The attempts moved nothing: the owner still reaches its session, and the store still binds it there.
        assertThat(routedTo(envoyOther, "ExecutePlan", session, "team-a")).isEqualTo("a1");
        assertThat(stored(session).replicaId()).isEqualTo("a1");
        assertThat(stored(session).released()).isFalse();
    }

    @Test
    void aRequestWithoutAUsableGroupIsRefusedWithWhatToDo() throws Exception {
        replica("a1", "team-a", 0);
        RouterServer strict = router("groups: {allow: {team-a: [team-a]}}");
        awaitPool(strict, "a1");
        ExtProcClient envoy = envoy(strict);

        ProcessingResponse missing = envoy.send(call("ExecutePlan", UUID.randomUUID().toString(), null));
        assertThat(ExtProcClient.rejectionCode(missing)).isEqualTo(Status.Code.UNAUTHENTICATED.value());
        assertThat(ExtProcClient.rejectionMessage(missing)).contains(ReplicaGroups.HEADER, "token");

        ProcessingResponse unknown = envoy.send(call("ExecutePlan", UUID.randomUUID().toString(), "team-<z>"));
        assertThat(ExtProcClient.rejectionCode(unknown)).isEqualTo(Status.Code.PERMISSION_DENIED.value());
        assertThat(ExtProcClient.rejectionMessage(unknown)).contains("team-?z?", "groups.allow")
                .doesNotContain("<z>");

        List<String[]> twice = call("ExecutePlan", UUID.randomUUID().toString(), "team-a");
        twice.add(new String[] {ReplicaGroups.HEADER, "team-a"});
        ProcessingResponse repeated = envoy.send(twice);
        assertThat(ExtProcClient.rejectionCode(repeated)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());

        // With withoutGroup, a request without the header is that group, and nothing else.
        RouterServer lenient = router("groups: {allow: {team-a: [team-a], public: [team-a]}, withoutGroup: public}");
        awaitPool(lenient, "a1");
        assertThat(routedTo(envoy(lenient), "ExecutePlan", UUID.randomUUID().toString(), null)).isEqualTo("a1");
    }
}
