package io.scrouter.extproc.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real decisions over real gRPC, then a real scrape of {@code /metrics} and reads of the admin view: the
 * counters and per-replica gauges must show exactly what happened.
 */
class MetricsAndAdminTest {

    private static final Duration PROBE_INTERVAL = Duration.ofMillis(100);
    /**
     * Production's probe timeout (1 s) with room: the counters below must show exactly the probes that failed on
     * purpose, so none may fail because a loaded machine answered a healthy stand-in late. For the same reason
     * a sample stays fresh for a whole probe round with room.
     */
    private static final Duration PROBE_TIMEOUT = Patience.of(Duration.ofSeconds(1));
    private static final Pattern SAMPLE = Pattern.compile("^([a-z_0-9]+)(\\{[^}]*\\})? ([0-9.eE+-]+|NaN)$");

    private SparkRestStandIn busy;
    private SparkRestStandIn idle;
    private RouterServer rs;
    private ManagedChannel channel;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        busy = new SparkRestStandIn().load(2, 2, 2);   // utilisation 2.0
        idle = new SparkRestStandIn().load(1, 0, 4);   // 0.25
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0}
                pool:
                  pollInterval: 100ms
                  static:
                    - {id: busy, grpc: "127.0.0.1:23001", metricsUrl: "%s", state: ready}
                    - {id: idle, grpc: "127.0.0.1:23002", metricsUrl: "%s", state: ready}
                    - {id: warm, grpc: "127.0.0.1:23003", state: warming}
                probe: {interval: %dms, timeout: %dms, staleAfter: %dms}
                placement: {policy: seed, ewmaAlpha: 1.0}
                admin: {bindAddress: 127.0.0.1, port: 0}
                metrics: {bindAddress: 127.0.0.1, port: 0}
                """.formatted(busy.url(), idle.url(), PROBE_INTERVAL.toMillis(), PROBE_TIMEOUT.toMillis(),
                Patience.of(PROBE_INTERVAL, PROBE_TIMEOUT).toMillis());
        rs = RouterServer.start(ConfigLoader.parse(yaml, Map.of()));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        Await.until("fresh samples", Patience.probeRound(rs.config()),
                () -> rs.board().isFresh("busy", System.currentTimeMillis())
                        && rs.board().isFresh("idle", System.currentTimeMillis()));
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        rs.close();
        busy.close();
        idle.close();
    }

    private Map<String, Double> scrape() throws Exception {
        String body = get("http://127.0.0.1:" + rs.metricsPort() + "/metrics").body();
        Map<String, Double> samples = new HashMap<>();
        for (String line : body.split("\n")) {
            Matcher m = SAMPLE.matcher(line);
            if (m.matches()) {
                samples.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
            }
        }
        return samples;
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void metricsCountDecisionsByOutcomeAndShowEachReplicasScoreInputs() throws Exception {
        ExtProcClient envoy = new ExtProcClient(channel, Patience.decision(rs.config()));
        List<String> sessions = List.of(UUID.randomUUID().toString(), UUID.randomUUID().toString(),
                UUID.randomUUID().toString());
        for (String s : sessions) {
            assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("ExecutePlan", s))))
                    .isEqualTo("127.0.0.1:23002");
        }
        for (int i = 0; i < 5; i++) {
            envoy.send(ExtProcClient.sparkCall("AnalyzePlan", sessions.get(0)));
        }
        // No header and no body to read the id from: rejected as missing.
        envoy.sendEndOfStream(ExtProcClient.sparkCall("ExecutePlan", null));
        List<String[]> forged = ExtProcClient.sparkCall("Config", sessions.get(1));
        forged.add(new String[] {RouteHeaders.UPSTREAM, "10.1.1.1:80"});
        envoy.send(forged);

        // A refresh that snapshots this router's tally before the placements and counts the store after them holds
        // them twice until the next refresh (SessionCounts.refresh, the safe direction): on a busy machine that
        // window can span a scrape, so wait for a scrape taken after such a refresh has passed.
        AtomicReference<Map<String, Double>> settled = new AtomicReference<>();
        Await.untilChecked("session counts refreshed", Patience.countsRefresh(rs.config()), () -> {
            Map<String, Double> scraped = scrape();
            settled.set(scraped);
            return rs.counts().get("idle") == 3 && rs.counts().get("busy") == 0
                    && Double.valueOf(3.0).equals(scraped.get("scrouter_replica_active_sessions{replica=\"idle\"}"));
        });
        Map<String, Double> m = settled.get();
        assertThat(m).containsEntry("scrouter_decisions_total{outcome=\"placed\",reason=\"\"}", 3.0)
                .containsEntry("scrouter_decisions_total{outcome=\"known\",reason=\"\"}", 6.0)
                .containsEntry("scrouter_decisions_total{outcome=\"rejected\",reason=\"missing_session_id\"}", 1.0)
                .containsEntry("scrouter_client_route_header_total", 1.0)
                .containsEntry("scrouter_decision_duration_seconds_count{outcome=\"placed\"}", 3.0)
                .containsEntry("scrouter_near_cache_requests_total{result=\"hit\"}", 6.0)
                .containsEntry("scrouter_near_cache_requests_total{result=\"miss\"}", 3.0)
                .containsEntry("scrouter_pool_replicas{state=\"ready\"}", 2.0)
                .containsEntry("scrouter_pool_replicas{state=\"warming\"}", 1.0)
                .containsEntry("scrouter_replica_state{replica=\"warm\",state=\"warming\"}", 1.0)
                .containsEntry("scrouter_replica_state{replica=\"warm\",state=\"ready\"}", 0.0)
                .containsEntry("scrouter_replica_utilisation_ratio{replica=\"busy\"}", 2.0)
                .containsEntry("scrouter_replica_utilisation_ratio{replica=\"idle\"}", 0.25)
                .containsEntry("scrouter_replica_active_sessions{replica=\"idle\"}", 3.0)
                .containsEntry("scrouter_replica_active_sessions{replica=\"busy\"}", 0.0)
                .containsEntry("scrouter_replica_fresh{replica=\"busy\"}", 1.0)
                .containsEntry("scrouter_replica_fresh{replica=\"warm\"}", 0.0)
                .containsEntry("scrouter_degraded_placement", 0.0);
        // The seed formula: 0.9 x utilisation + 0.1 x min(sessions / 50, 1).
        assertThat(m.get("scrouter_replica_score{replica=\"busy\"}")).isCloseTo(0.9 * 2.0, within());
        assertThat(m.get("scrouter_replica_score{replica=\"idle\"}")).isCloseTo(0.9 * 0.25 + 0.1 * 3 / 50.0, within());
        assertThat(m).containsKey("scrouter_replica_sample_age_seconds{replica=\"busy\"}")
                .doesNotContainKey("scrouter_replica_sample_age_seconds{replica=\"warm\"}");
        assertThat(m.get("scrouter_replica_probe_failures_total{replica=\"busy\"}")).isZero();

        // A replica whose metrics endpoint fails shows it at once.
        busy.failing(true);
        Await.until("probe failure counted", Patience.probeRound(rs.config()), () -> {
            try {
                return scrape().getOrDefault("scrouter_replica_probe_failures_total{replica=\"busy\"}", 0.0) >= 1;
            } catch (Exception e) {
                return false;
            }
        });
        assertThat(scrape()).containsEntry("scrouter_replica_fresh{replica=\"busy\"}", 0.0);
    }

    @Test
    void scrapeCarriesTheBuildVersionAndJvmAndProcessSeriesAndNoSinceStartHitRatio() throws Exception {
        Map<String, Double> m = scrape();

        // The version Maven builds, read from the pom rather than from the code under test.
        String pom = java.nio.file.Files.readString(java.nio.file.Path.of("pom.xml"));
        Matcher version = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL).matcher(pom);
        assertThat(version.find()).isTrue();
        assertThat(m).containsEntry("scrouter_build_info{version=\"" + version.group(1).trim() + "\"}", 1.0);
        assertThat(m.keySet()).as("JVM and process series")
                .anyMatch(k -> k.startsWith("jvm_memory_used_bytes{area=\"heap\"}"))
                .anyMatch(k -> k.startsWith("jvm_threads_current"))
                .anyMatch(k -> k.startsWith("jvm_gc_collection_seconds_count"))
                .anyMatch(k -> k.startsWith("process_cpu_seconds_total"))
                .anyMatch(k -> k.startsWith("process_start_time_seconds"));
        // It read 1.0 before any lookup and duplicated what the dashboard computes from the two counters.
        assertThat(m.keySet()).noneMatch(k -> k.startsWith("scrouter_near_cache_hit_ratio"));
    }

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(1e-9);
    }

    @Test
    void adminViewShowsThePoolOneSessionsPlacementAndReadiness() throws Exception {
        ExtProcClient envoy = new ExtProcClient(channel, Patience.decision(rs.config()));
        String session = UUID.randomUUID().toString();
        envoy.send(ExtProcClient.sparkCall("ExecutePlan", session));
        String base = "http://127.0.0.1:" + rs.adminPort();

        JsonNode pool = new ObjectMapper().readTree(get(base + "/api/pool").body());
        assertThat(pool.get("policy").asText()).isEqualTo(rs.config().placement().policy());
        assertThat(pool.get("degradedPlacement").asBoolean()).isFalse();
        Map<String, JsonNode> byId = new HashMap<>();
        pool.get("replicas").forEach(r -> byId.put(r.get("id").asText(), r));
        assertThat(byId).containsOnlyKeys("busy", "idle", "warm");
        assertThat(byId.get("idle").get("utilisation").asDouble()).isEqualTo(0.25);
        assertThat(byId.get("idle").get("grpc").asText()).isEqualTo("127.0.0.1:23002");
        assertThat(byId.get("warm").get("state").asText()).isEqualTo("warming");
        assertThat(byId.get("warm").get("sampleAgeMillis").asLong()).isEqualTo(-1);
        assertThat(byId.get("busy").get("fresh").asBoolean()).isTrue();

        JsonNode one = new ObjectMapper().readTree(get(base + "/api/sessions/" + session).body());
        assertThat(one.get("cached").get("replica").asText()).isEqualTo("idle");
        assertThat(one.get("store").get("replica").asText()).isEqualTo("idle");
        assertThat(get(base + "/api/sessions/not-a-uuid").statusCode()).isEqualTo(400);

        assertThat(get(base + "/healthz").statusCode()).isEqualTo(200);
        assertThat(get(base + "/readyz").statusCode()).isEqualTo(200);
        String page = get(base + "/").body();
        assertThat(page).contains("<td>idle</td>", "<td>127.0.0.1:23001</td>", "warming");
    }
}
