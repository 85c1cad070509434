package io.scrouter.sparke2e;

import io.grpc.Status;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.RouterCounters;
import io.scrouter.testkit.envoy.EnvoyConfigs;
import io.scrouter.testkit.envoy.EnvoyModel;
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
import java.net.InetSocketAddress;
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

    /**
     * One-row partitions sleeping 3 s each, no UDF needed. There are enough of them to keep a replica's two slots
     * (local[2]) busy for as long as the test places its new sessions, however slow the machine: the test
     * interrupts the job when it is done, and fails on the precondition, not on routing, if the job ended first.
     */
    private static final int SLOW_PARTITIONS = 400;
    private static final long SLOW_TASK_MILLIS = 3000;
    private static final String SLOW_QUERY = "SELECT id, reflect('java.lang.Thread','sleep', CAST(" + SLOW_TASK_MILLIS
            + " AS BIGINT)) FROM range(0," + SLOW_PARTITIONS + ",1," + SLOW_PARTITIONS + ")";
    /** Task slots of each server (SparkConnectServer runs {@code local[2]}). */
    private static final int SLOTS = 2;
    /**
     * The probe's timeout: production's 1 s with room. The subject here is what the probe reads from a real
     * driver, so a starved machine answering the REST API late must not make a replica's sample unusable.
     */
    private static final Duration PROBE_TIMEOUT = Patience.of(Duration.ofSeconds(1));
    private static final Duration PROBE_INTERVAL = Duration.ofMillis(250);
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
    private RouterConfig config;
    private EnvoyStandIn proxy;

    /**
     * The shipped {@code envoy/envoy.yaml}, with one change: Envoy's ext_proc {@code message_timeout} (200 ms) gets
     * room. On a starved machine a decision is answered late now and then; Envoy would fail that call with
     * UNAVAILABLE (the client retries it), and these tests, which are about where calls land, would blame the
     * routing. The router's own decision deadline stays below it, as the README asks.
     */
    private static EnvoyModel shippedEnvoy() throws IOException {
        EnvoyModel shipped = EnvoyModel.of(EnvoyConfigs.bootstrap(
                Files.readString(SparkConnectServer.repoFile("envoy/envoy.yaml"))));
        return shipped.withMessageTimeout(Patience.of(shipped.messageTimeout()));
    }

    /**
     * Until Envoy counts the router healthy, from the ext_proc cluster's own health check: a check per interval,
     * {@code healthy_threshold} of them passing, each within its timeout.
     */
    private static Duration healthyWithin(EnvoyModel model) {
        EnvoyModel.ExtProcHealthCheck hc = model.healthCheck();
        return Patience.of(hc.interval().plus(hc.timeout()).multipliedBy(hc.healthyThreshold()));
    }

    /** The slow job's length if nothing else ran: its tasks, {@link #SLOTS} at a time. */
    private static Duration slowJobNominal() {
        return Duration.ofMillis(SLOW_TASK_MILLIS * SLOW_PARTITIONS / SLOTS);
    }

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
        // Redis and decision deadlines are production's with room, like the probe's: the subject is routing.
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: %dms}
                redis: {address: "%s", timeout: %dms, keyPrefix: e2e}
                pool: {pollInterval: 200ms}
                probe: {interval: %dms, timeout: %dms, staleAfter: %dms}
                sessions: {idleTtl: 10m, refreshEvery: 1s}
                placement: {policy: seed, ewmaAlpha: 1.0}
                admin: {bindAddress: 127.0.0.1, port: 0}
                metrics: {bindAddress: 127.0.0.1, port: 0}
                """.formatted(Patience.DECISION_DEADLINE.toMillis(), redis.address(), Patience.REDIS_TIMEOUT.toMillis(),
                PROBE_INTERVAL.toMillis(), PROBE_TIMEOUT.toMillis(), Patience.of(PROBE_INTERVAL, PROBE_TIMEOUT).toMillis());
        config = ConfigLoader.parse(yaml, Map.of());
        router = RouterServer.start(config);
        proxy = EnvoyStandIn.start(shippedEnvoy(), List.of(new InetSocketAddress("127.0.0.1", router.port())));
        assertThat(config.server().decisionDeadline()).as("decision deadline inside Envoy's message timeout")
                .isLessThan(proxy.model().messageTimeout());
        assertThat(proxy.awaitHealthyExtProc(1, healthyWithin(proxy.model()))).isTrue();
        Await.until("fresh load samples from both real servers", Patience.probeRound(config), () -> {
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

    /** Where the proxy sent the session's calls; every call must have been routed and served. */
    private Set<String> upstreamsOf(String sessionId) {
        return upstreamsOf(proxy, sessionId);
    }

    private static Set<String> upstreamsOf(EnvoyStandIn envoy, String sessionId) {
        List<RecordedCall> calls = envoy.callsOf(sessionId);
        assertThat(calls).as("calls of session %s", sessionId).isNotEmpty()
                .allSatisfy(c -> assertThat(c.upstream()).as("routed: %s", c).isNotNull())
                .allSatisfy(c -> assertThat(servedOrLateRelease(c)).as("served: %s", c).isTrue());
        return calls.stream().map(RecordedCall::upstream).collect(Collectors.toSet());
    }

    /**
     * OK, or the end of a ReleaseExecute that the client itself cut short: Spark's client sends ReleaseExecute
     * asynchronously, and on a busy machine it can come after the session is closed (the replica, the right one:
     * the call was routed like the others, answers INVALID_HANDLE.SESSION_CLOSED) or still be in flight when the
     * client closes its channel (the stand-in records CANCELLED, "the client went away").
     */
    private static boolean servedOrLateRelease(RecordedCall c) {
        if (c.status() == Status.Code.OK) {
            return true;
        }
        return "ReleaseExecute".equals(c.method()) && c.description() != null
                && (c.description().contains("INVALID_HANDLE.SESSION_CLOSED")
                        || c.status() == Status.Code.CANCELLED && c.description().equals("the client went away"));
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
            // The job's tasks start within one task's length of the submission (slots free up) and the probe
            // reads them within a round.
            Await.until("replica A's utilisation above B's while the slow job runs",
                    Patience.of(Duration.ofMillis(SLOW_TASK_MILLIS), PROBE_INTERVAL, PROBE_TIMEOUT), () -> {
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
            // Each is placed only while the precondition holds: A still busy and both samples fresh. If the job
            // ended or a probe failed, the test says so instead of blaming the placement.
            List<String> withHeader = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                awaitABusyAndBothFresh(slowJob);
                withHeader.add(newSessionLandsOn(true));
            }
            List<String> bodyMode = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                awaitABusyAndBothFresh(slowJob);
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
                // Interrupted, the job ends once its running tasks do: one task's length.
                slowJob.get(Patience.of(Duration.ofMillis(SLOW_TASK_MILLIS)).toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception interrupted) {
                // expected: the job was interrupted
            }
            busy.close();
        }
        // Later tests share replica A: its slots must be free again, not held by what is left of the job.
        Await.until("replica A idle again after the interrupt", Patience.of(Duration.ofMillis(SLOW_TASK_MILLIS))
                .plus(Patience.probeRound(config)), () -> router.board().get(A).utilisation() < 1.0);
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
        // ReleaseExecute follows a finished result stream asynchronously: two calls, each one ext_proc exchange
        // (bounded by Envoy's message timeout) and the replica's answer.
        Await.until("ReleaseSession and ReleaseExecute of session " + id,
                Patience.of(proxy.model().messageTimeout(), config.server().decisionDeadline()).multipliedBy(2), () -> {
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
    void clientSetRouteHeaderIsRemovedBeforeTheRouterSeesIt() {
        double seenBefore = RouterCounters.clientRouteHeaders(router);
        String id = UUID.randomUUID().toString();
        String forged = viaProxy(id, true) + ";" + RouteHeaders.UPSTREAM + "=127.0.0.1:1";
        try (SparkSession spark = connect(forged)) {
            assertThat(spark.sql("SELECT 2").collectAsList()).hasSize(1);
        }
        assertThat(upstreamsOf(id)).hasSize(1).doesNotContain("127.0.0.1:1");
        // The shipped envoy.yaml removes the header first (early_header_mutation_extensions): the router never
        // saw it. The next test takes that removal away.
        assertThat(proxy.model().earlyRemovedHeaders()).contains(RouteHeaders.UPSTREAM);
        assertThat(RouterCounters.clientRouteHeaders(router)).isEqualTo(seenBefore);
    }

    @Test
    @Order(6)
    void clientSetRouteHeaderThatReachesTheRouterIsOverwritten() throws Exception {
        // The shipped bootstrap without its early header removal, as a deployment that lost it would run: the
        // client's header reaches the router, which must overwrite it with the session's replica.
        EnvoyModel unprotected = shippedEnvoy().withEarlyRemovedHeaders(List.of());
        try (EnvoyStandIn open = EnvoyStandIn.start(unprotected,
                List.of(new InetSocketAddress("127.0.0.1", router.port())))) {
            assertThat(open.awaitHealthyExtProc(1, healthyWithin(open.model()))).isTrue();
            double seenBefore = RouterCounters.clientRouteHeaders(router);
            String id = UUID.randomUUID().toString();
            String forged = "sc://127.0.0.1:" + open.port() + "/;session_id=" + id + ";x-spark-session-id=" + id
                    + ";" + RouteHeaders.UPSTREAM + "=127.0.0.1:1";
            // State made by one call is found by the next: every call reached the session's replica. The work runs
            // aside, because a call sent to the forged address would be retried by the client for minutes.
            CompletableFuture<Long> work = CompletableFuture.supplyAsync(() -> {
                try (SparkSession spark = connect(forged)) {
                    spark.range(7).createOrReplaceTempView("forged_header");
                    return spark.sql("SELECT count(*) FROM forged_header").collectAsList().get(0).getLong(0);
                }
            });
            try {
                awaitSessionDone(work, open, id);
            } finally {
                work.cancel(true);
            }
            assertThat(work.join()).isEqualTo(7L);
            List<RecordedCall> calls = open.callsOf(id);
            Set<String> upstreams = upstreamsOf(open, id);
            assertThat(upstreams).hasSize(1).doesNotContain("127.0.0.1:1");
            assertThat(servers.values().stream().map(SparkConnectServer::grpcAddress))
                    .contains(upstreams.iterator().next());
            // The router saw the header on each of these calls (and counted it), and overwrote it.
            assertThat(RouterCounters.clientRouteHeaders(router) - seenBefore)
                    .as("requests that reached the router carrying %s", RouteHeaders.UPSTREAM)
                    .isGreaterThanOrEqualTo(calls.size());
            findings.put("forged route header reaching the router: calls / counted by the router / upstream",
                    calls.size() + " / " + (RouterCounters.clientRouteHeaders(router) - seenBefore) + " / "
                            + replicaIdAt(upstreams.iterator().next()));
        }
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
            Await.until("router drops the killed replica", Patience.poolChange(config),
                    () -> router.pool().snapshot().get(victim) == null);

            assertThatThrownBy(() -> spark.sql("SELECT * FROM before_kill").collectAsList())
                    .satisfies(e -> findings.put("error the client got after its replica was killed",
                            String.valueOf(e.getMessage())))
                    .hasMessageContaining("FAILED_PRECONDITION")
                    .hasMessageContaining("has left the pool")
                    .hasMessageContaining("Start a new session");

            Await.until("the killed replica gets no new sessions", Patience.probeRound(config),
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

    /**
     * Waits for a session's work to finish through {@code envoy}, failing as soon as one of its calls went
     * anywhere but a replica, or when no call of it has completed for one call's bound (Envoy's message timeout
     * for the ext_proc exchange, then the replica's answer within the router's decision deadline, with room).
     */
    private void awaitSessionDone(CompletableFuture<?> work, EnvoyStandIn envoy, String id)
            throws InterruptedException {
        long stallNanos = Patience.of(envoy.model().messageTimeout(), config.server().decisionDeadline()).toNanos();
        Set<String> replicas = servers.values().stream().map(SparkConnectServer::grpcAddress)
                .collect(Collectors.toSet());
        int seen = 0;
        long progressAt = System.nanoTime();
        while (!work.isDone()) {
            List<RecordedCall> calls = envoy.callsOf(id);
            assertThat(calls).as("calls of session %s so far", id)
                    .allSatisfy(c -> assertThat(replicas).as("upstream of %s", c).contains(c.upstream()));
            if (calls.size() != seen) {
                seen = calls.size();
                progressAt = System.nanoTime();
            } else if (System.nanoTime() - progressAt > stallNanos) {
                throw new AssertionError("no call of session " + id + " completed for " + stallNanos / 1_000_000
                        + " ms; calls so far: " + calls);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Waits, within a probe round, until the probe shows replica A busy (its slots full) and both samples fresh;
     * fails with the reason if the slow job has ended or the condition does not come back.
     */
    private void awaitABusyAndBothFresh(CompletableFuture<Object> slowJob) {
        assertThat(slowJob).as("the slow job on A still running (it has %d tasks of %d ms on %d slots)",
                SLOW_PARTITIONS, SLOW_TASK_MILLIS, SLOTS).isNotDone();
        Await.until("replica A busy and both samples fresh", Patience.probeRound(config), () -> {
            long now = System.currentTimeMillis();
            return router.board().isFresh(A, now) && router.board().isFresh(B, now)
                    && router.board().get(A).utilisation() >= 1.0;
        });
    }
}
