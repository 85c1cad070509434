package io.scrouter.sparke2e;

import io.grpc.Status;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.testkit.envoy.EnvoyStandIn;
import io.scrouter.testkit.envoy.RecordedCall;
import io.scrouter.testkit.redis.RedisProcess;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.connect.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The router end to end with real Spark: two real Spark Connect servers (child JVMs, local[2]), the real Spark
 * Connect JVM client, the router ({@link RouterServer} on a real {@code redis-server}) and the Envoy stand-in
 * ({@link EnvoyStandIn}, running the shipped {@code envoy/envoy.yaml}) in Envoy's place. The two servers are shared
 * by the tests of this class; the test that kills a replica runs last.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RealSparkRoutingTest {

    /** 16 one-row partitions sleeping 3 s each: 24 s of work on 2 slots, no UDF needed. */
    private static final String SLOW_QUERY =
            "SELECT id, reflect('java.lang.Thread','sleep', CAST(3000 AS BIGINT)) FROM range(0,16,1,16)";
    private static final String A = "replica-a";
    private static final String B = "replica-b";

    private final Path work = Path.of(System.getProperty("spark.e2e.work", "target/spark-e2e-work"));
    private final Map<String, SparkConnectServer> servers = new LinkedHashMap<>();
    private final Map<String, String> findings = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private RedisProcess redis;
    private RedissonClient redisAdmin;
    private RedisInstanceStore instances;
    private RouterServer router;
    private EnvoyStandIn proxy;

    @BeforeAll
    void startEverything() throws Exception {
        Files.createDirectories(work);
        // Both JVMs start side by side; each takes several seconds.
        servers.put(A, SparkConnectServer.start("a", work));
        servers.put(B, SparkConnectServer.start("b", work));
        for (SparkConnectServer s : servers.values()) {
            s.awaitReady(150);
        }
        redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        redisAdmin = Redisson.create(c);
        instances = new RedisInstanceStore(redisAdmin, new RedisKeys("e2e"));
        for (Map.Entry<String, SparkConnectServer> e : servers.entrySet()) {
            instances.publish(new Replica(e.getKey(), e.getValue().grpcAddress(), e.getValue().metricsUrl(),
                    ReplicaState.READY), Duration.ofMinutes(30)).get(5, TimeUnit.SECONDS);
        }
        // ewmaAlpha 1: the board shows the last sample, so the test reads exactly what the probe read.
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0}
                redis: {address: "%s", timeout: 200ms, keyPrefix: e2e}
                pool: {pollInterval: 200ms}
                probe: {interval: 250ms, timeout: 1s, staleAfter: 3s}
                sessions: {idleTtl: 10m, refreshEvery: 1s}
                placement: {policy: seed, ewmaAlpha: 1.0}
                admin: {bindAddress: 127.0.0.1, port: 0}
                metrics: {bindAddress: 127.0.0.1, port: 0}
                """.formatted(redis.address());
        router = RouterServer.start(ConfigLoader.parse(yaml, Map.of()));
        proxy = EnvoyStandIn.start(SparkConnectServer.repoFile("envoy/envoy.yaml"),
                List.of(new java.net.InetSocketAddress("127.0.0.1", router.port())));
        assertThat(proxy.awaitHealthyExtProc(1, Duration.ofSeconds(30))).isTrue();
        awaitTrue("fresh load samples from both real servers", 20, () -> {
            long now = System.currentTimeMillis();
            return router.board().isFresh(A, now) && router.board().isFresh(B, now);
        });
    }

    @AfterAll
    void stopEverything() throws Exception {
        writeFindings();
        if (proxy != null) {
            proxy.close();
        }
        if (router != null) {
            router.close();
        }
        if (redisAdmin != null) {
            redisAdmin.shutdown();
        }
        if (redis != null) {
            redis.close();
        }
        for (SparkConnectServer s : servers.values()) {
            s.close();
        }
    }

    private String viaProxy(String sessionId, boolean withHeader) {
        return "sc://127.0.0.1:" + proxy.port() + "/;session_id=" + sessionId
                + (withHeader ? ";x-spark-session-id=" + sessionId : "");
    }

    private static SparkSession connect(String remote) {
        return SparkSession.builder().remote(remote).create();
    }

    /** Where the proxy sent the session's calls; every call must have been routed. */
    private Set<String> upstreamsOf(String sessionId) {
        List<RecordedCall> calls = proxy.callsOf(sessionId);
        assertThat(calls).as("calls of session %s", sessionId).isNotEmpty()
                .allSatisfy(c -> assertThat(c.status()).as("%s", c).isEqualTo(Status.Code.OK));
        return calls.stream().map(RecordedCall::upstream).collect(Collectors.toSet());
    }

    private String replicaIdAt(String address) {
        return servers.entrySet().stream().filter(e -> e.getValue().grpcAddress().equals(address))
                .map(Map.Entry::getKey).findFirst().orElseThrow();
    }

    static List<String> methods(List<RecordedCall> calls) {
        return calls.stream().map(RecordedCall::method).toList();
    }

    /** A new session through the proxy runs one query; returns the replica it landed on. */
    private String newSessionLandsOn(boolean withHeader) {
        String id = UUID.randomUUID().toString();
        try (SparkSession spark = connect(viaProxy(id, withHeader))) {
            assertThat(spark.sql("SELECT 1 AS one").collectAsList()).hasSize(1);
        }
        Set<String> upstreams = upstreamsOf(id);
        assertThat(upstreams).as("session %s", id).hasSize(1);
        if (!withHeader) {
            assertThat(proxy.callsOf(id)).allSatisfy(c -> assertThat(c.routedFromBody()).isTrue());
        }
        return replicaIdAt(upstreams.iterator().next());
    }

    @Test
    @Order(1)
    void serversRunTheClientsSparkVersion() {
        try (SparkSession spark = connect("sc://127.0.0.1:" + servers.get(A).grpcPort())) {
            assertThat(spark.version()).isEqualTo(System.getProperty("spark.version"));
        }
    }

    @Test
    @Order(2)
    void probeReadsTheBusyReplicaAndNewSessionsGoToTheIdleOne() throws Exception {
        captureRest("idle", A);
        String busyId = UUID.randomUUID().toString();
        SparkSession busy = connect("sc://127.0.0.1:" + servers.get(A).grpcPort() + "/;session_id=" + busyId);
        CompletableFuture<Object> slowJob = CompletableFuture.supplyAsync(() -> busy.sql(SLOW_QUERY).collectAsList());
        try {
            awaitTrue("replica A's utilisation above B's while the slow job runs", 30, () -> {
                double a = router.board().get(A).utilisation();
                double b = router.board().get(B).utilisation();
                return a >= 1.0 && a > b;
            });
            double busyUtilisation = router.board().get(A).utilisation();
            double idleUtilisation = router.board().get(B).utilisation();
            findings.put("utilisation read by the probe, busy replica A", Double.toString(busyUtilisation));
            findings.put("utilisation read by the probe, idle replica B", Double.toString(idleUtilisation));
            assertThat(busyUtilisation).isGreaterThan(idleUtilisation);
            captureRest("busy", A);
            captureRest("idle", B);

            // The next new session, then several more, all while A is busy: each lands on B.
            List<String> withHeader = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                withHeader.add(newSessionLandsOn(true));
            }
            List<String> bodyMode = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                bodyMode.add(newSessionLandsOn(false));
            }
            findings.put("6 new sessions with the header, A busy, landed on", withHeader.toString());
            findings.put("3 new sessions without the header (body mode), A busy, landed on", bodyMode.toString());
            findings.put("utilisation of A when the last of them was placed",
                    Double.toString(router.board().get(A).utilisation()));
            assertThat(withHeader).containsOnly(B);
            assertThat(bodyMode).containsOnly(B);
        } finally {
            busy.interruptAll();
            try {
                slowJob.get(60, TimeUnit.SECONDS);
            } catch (Exception interrupted) {
                // expected: the job was interrupted
            }
            busy.close();
        }
    }

    private void sessionStateSurvivesEveryRpc(boolean withHeader) throws Exception {
        String id = UUID.randomUUID().toString();
        try (SparkSession spark = connect(viaProxy(id, withHeader))) {
            spark.conf().set("spark.sql.shuffle.partitions", "3");
            spark.range(10).createOrReplaceTempView("numbers");
            assertThat(spark.table("numbers").schema().fieldNames()).containsExactly("id");
            List<Row> rows = spark.sql("SELECT count(*) AS n, sum(id) AS s FROM numbers").collectAsList();
            assertThat(rows.get(0).getLong(0)).isEqualTo(10L);
            assertThat(rows.get(0).getLong(1)).isEqualTo(45L);
            assertThat(spark.conf().get("spark.sql.shuffle.partitions")).isEqualTo("3");
        }
        // ReleaseExecute follows a finished result stream asynchronously.
        awaitTrue("ReleaseSession and ReleaseExecute of session " + id, 10, () -> {
            List<String> methods = methods(proxy.callsOf(id));
            return methods.contains("ReleaseSession") && methods.contains("ReleaseExecute");
        });
        List<RecordedCall> calls = proxy.callsOf(id);
        assertThat(methods(calls))
                .contains("Config", "ExecutePlan", "AnalyzePlan", "ReleaseExecute", "ReleaseSession");
        assertThat(upstreamsOf(id)).as("every RPC of the session on one replica: %s", calls).hasSize(1);
        if (!withHeader) {
            assertThat(calls).allSatisfy(c -> assertThat(c.routedFromBody()).isTrue());
        }
        findings.put((withHeader ? "header" : "body") + " mode: RPCs of one session (all on "
                + replicaIdAt(upstreamsOf(id).iterator().next()) + ")",
                methods(calls).toString());
    }

    @Test
    @Order(3)
    void everyRpcOfASessionLandsOnItsReplicaWithTheHeader() throws Exception {
        sessionStateSurvivesEveryRpc(true);
    }

    @Test
    @Order(4)
    void everyRpcOfASessionLandsOnItsReplicaWithoutTheHeader() throws Exception {
        sessionStateSurvivesEveryRpc(false);
    }

    @Test
    @Order(5)
    void clientSetRouteHeaderIsIgnored() {
        String id = UUID.randomUUID().toString();
        String forged = viaProxy(id, true) + ";x-scrouter-upstream=127.0.0.1:1";
        try (SparkSession spark = connect(forged)) {
            assertThat(spark.sql("SELECT 2").collectAsList()).hasSize(1);
        }
        assertThat(upstreamsOf(id)).hasSize(1).doesNotContain("127.0.0.1:1");
    }

    @Test
    @Order(99)
    void whenASessionsReplicaIsKilledTheClientGetsAClearErrorAndANewSessionWorks() throws Exception {
        String id = UUID.randomUUID().toString();
        SparkSession spark = connect(viaProxy(id, true));
        try {
            spark.range(5).createOrReplaceTempView("before_kill");
            String victim = replicaIdAt(upstreamsOf(id).iterator().next());
            String survivor = victim.equals(A) ? B : A;
            servers.get(victim).kill();
            // What a controller does when a replica's pod is gone (its key would also expire on its own).
            instances.remove(victim).get(5, TimeUnit.SECONDS);
            awaitTrue("router drops the killed replica", 10, () -> router.pool().snapshot().get(victim) == null);

            assertThatThrownBy(() -> spark.sql("SELECT * FROM before_kill").collectAsList())
                    .satisfies(e -> findings.put("error the client got after its replica was killed",
                            String.valueOf(e.getMessage())))
                    .hasMessageContaining("FAILED_PRECONDITION")
                    .hasMessageContaining("has left the pool")
                    .hasMessageContaining("Start a new session");

            awaitTrue("the killed replica gets no new sessions", 10,
                    () -> !router.board().isFresh(victim, System.currentTimeMillis())
                            || router.pool().snapshot().get(victim) == null);
            assertThat(newSessionLandsOn(true)).isEqualTo(survivor);
            assertThat(newSessionLandsOn(false)).isEqualTo(survivor);
        } finally {
            try {
                spark.close();
            } catch (RuntimeException expected) {
                // its replica is gone
            }
        }
    }

    /** Saves the driver's monitoring REST responses, for comparison with the scorer's samples. */
    private void captureRest(String label, String replicaId) {
        String base = servers.get(replicaId).metricsUrl() + "/api/v1/applications";
        Path dir = work.resolve("spark-rest-capture/spark-" + System.getProperty("spark.version"));
        try {
            Files.createDirectories(dir);
            String apps = get(base);
            Files.writeString(dir.resolve(label + "-" + replicaId + "-applications.json"), apps);
            String appId = apps.replaceAll("(?s).*?\"id\"\\s*:\\s*\"([^\"]+)\".*", "$1");
            Files.writeString(dir.resolve(label + "-" + replicaId + "-executors.json"),
                    get(base + "/" + appId + "/executors"));
            Files.writeString(dir.resolve(label + "-" + replicaId + "-stages-active.json"),
                    get(base + "/" + appId + "/stages?status=active"));
            Files.writeString(dir.resolve(label + "-" + replicaId + "-jobs-running.json"),
                    get(base + "/" + appId + "/jobs?status=running"));
        } catch (IOException | InterruptedException e) {
            findings.put("REST capture " + label + " " + replicaId + " failed", e.toString());
        }
    }

    private String get(String url) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(3)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private void writeFindings() throws IOException {
        StringBuilder sb = new StringBuilder();
        findings.forEach((k, v) -> sb.append(k).append(": ").append(v).append('\n'));
        Files.createDirectories(work);
        Files.writeString(work.resolve("findings.txt"), sb.toString());
        System.out.print(sb);
    }

    private static void awaitTrue(String what, long seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
    }
}
