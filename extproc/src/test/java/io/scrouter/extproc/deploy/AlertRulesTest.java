package io.scrouter.extproc.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.publisher.PublisherMetrics;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The PrometheusRule's alerts can fire: every series an expression selects is one the router or the publisher
 * really exports, with the label values it really uses (a renamed metric or label would leave an alert
 * silently empty). The exported set comes from a running router and a publisher's registry, not from a list.
 */
class AlertRulesTest {

    private static final String RULE = "istio/components/monitoring/prometheusrule.yaml";
    /** PromQL words that are not series names. */
    private static final Set<String> PROMQL = Set.of("sum", "max", "min", "avg", "count", "rate", "increase",
            "irate", "histogram_quantile", "time", "and", "or", "unless", "by", "without", "on", "ignoring",
            "bool", "absent", "group_left", "group_right");
    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\{([^}]*)\\})?");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!=|!~|=)\\s*\"([^\"]*)\"");

    /** Series name → the label=value pairs seen on it. */
    private static final Map<String, Set<String>> EXPORTED = new HashMap<>();
    private static List<JsonNode> alerts;

    @BeforeAll
    static void collect() throws Exception {
        JsonNode rule = EnvoyProtos.yamlTree(RepoFiles.read(RepoFiles.root().resolve(RULE)));
        alerts = new ArrayList<>();
        rule.at("/spec/groups").forEach(g -> g.path("rules").forEach(alerts::add));

        try (SparkRestStandIn rest = new SparkRestStandIn();
             RouterServer rs = RouterServer.start(ConfigLoader.parse("""
                     server: {bindAddress: 127.0.0.1, port: 0}
                     pool: {static: [{id: a, grpc: "127.0.0.1:24001", metricsUrl: "%s"},
                                     {id: b, grpc: "127.0.0.1:24002", state: warming}]}
                     """.formatted(rest.url()), Map.of()))) {
            record(rs.metrics().registry());
        }
        PublisherMetrics publisher = new PublisherMetrics("spark-0", Duration.ofSeconds(10), Duration.ofSeconds(2));
        publisher.renewed(ReplicaState.READY, System.currentTimeMillis());
        publisher.renewalFailed();
        record(publisher.registry());
    }

    private static void record(PrometheusRegistry registry) {
        for (MetricSnapshot snapshot : registry.scrape()) {
            String name = snapshot.getMetadata().getPrometheusName();
            List<String> series = new ArrayList<>();
            if (snapshot instanceof CounterSnapshot) {
                series.add(name + "_total");
            } else if (snapshot instanceof HistogramSnapshot) {
                series.addAll(List.of(name + "_bucket", name + "_count", name + "_sum"));
            } else if (snapshot instanceof InfoSnapshot) {
                series.add(name + "_info");
            } else {
                series.add(name);
            }
            for (String s : series) {
                Set<String> labels = EXPORTED.computeIfAbsent(s, k -> new HashSet<>());
                for (DataPointSnapshot point : snapshot.getDataPoints()) {
                    Labels l = point.getLabels();
                    for (int i = 0; i < l.size(); i++) {
                        labels.add(l.getPrometheusName(i) + "=" + l.getValue(i));
                    }
                }
            }
        }
    }

    /** The series an expression selects, each with its label matchers. */
    private static Map<String, List<String[]>> selectors(String expr) {
        // Ranges, groupings and string literals outside selectors are not series names.
        String cleaned = expr.replaceAll("\\[[^]]*\\]", " ")
                .replaceAll("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)", " ");
        Map<String, List<String[]>> found = new HashMap<>();
        Matcher m = SELECTOR.matcher(cleaned);
        while (m.find()) {
            String word = m.group(1);
            if (PROMQL.contains(word) || Character.isDigit(word.charAt(0))) {
                continue;
            }
            List<String[]> matchers = found.computeIfAbsent(word, k -> new ArrayList<>());
            if (m.group(3) != null) {
                Matcher lm = MATCHER.matcher(m.group(3));
                while (lm.find()) {
                    matchers.add(new String[] {lm.group(1), lm.group(2), lm.group(3)});
                }
            }
        }
        return found;
    }

    @Test
    void everyAlertSelectsExportedSeriesWithLabelValuesTheyCarry() {
        assertThat(alerts).isNotEmpty();
        for (JsonNode alert : alerts) {
            String name = alert.path("alert").asText();
            Map<String, List<String[]>> selected = selectors(alert.path("expr").asText());
            assertThat(selected).as("%s selects a series", name).isNotEmpty();
            selected.forEach((series, matchers) -> {
                assertThat(EXPORTED).as("%s: %s is exported", name, series).containsKey(series);
                for (String[] lm : matchers) {
                    assertThat(lm[1]).as("%s: exact matchers only, so this check can hold", name).isEqualTo("=");
                    assertThat(EXPORTED.get(series)).as("%s: %s carries %s=%s", name, series, lm[0], lm[2])
                            .contains(lm[0] + "=" + lm[2]);
                }
            });
            assertThat(alert.path("for").asText()).as("%s waits before firing", name).isNotEmpty();
            assertThat(alert.at("/labels/severity").asText()).as("%s severity", name).isIn("warning", "critical");
            assertThat(alert.at("/annotations/description").asText()).as("%s says what to check", name)
                    .contains("Check");
        }
    }

    @Test
    void theIssuesFiveSituationsEachHaveAnAlert() {
        Set<String> selected = new HashSet<>();
        alerts.forEach(a -> selected.addAll(selectors(a.path("expr").asText()).keySet()));
        assertThat(selected).contains(
                "scrouter_store_circuit_open",                        // store circuit open
                "scrouter_degraded_placement",                        // degraded placement
                "scrouter_pool_replicas",                             // no ready replica
                "scrouter_decision_duration_seconds_bucket",          // decision p99 near message_timeout
                "scrouter_publisher_last_renewal_timestamp_seconds"); // publisher not renewing
    }

    @Test
    void latencyAlertFiresBeforeEnvoysMessageTimeout() {
        JsonNode alert = alerts.stream().filter(a -> a.path("expr").asText().contains("histogram_quantile"))
                .findFirst().orElseThrow();
        Matcher threshold = Pattern.compile(">\\s*([0-9.]+)\\s*$").matcher(alert.path("expr").asText().trim());
        assertThat(threshold.find()).isTrue();
        double seconds = Double.parseDouble(threshold.group(1));

        // Envoy writes proto durations as seconds with an "s" suffix ("0.2s").
        List<Double> timeouts = new ArrayList<>();
        for (Manifest filter : Manifest.ofKind("EnvoyFilter")) {
            filter.spec().path("configPatches").forEach(p -> {
                JsonNode t = p.at("/patch/value/typed_config/message_timeout");
                if (!t.isMissingNode()) {
                    assertThat(t.asText()).endsWith("s");
                    timeouts.add(Double.parseDouble(t.asText().substring(0, t.asText().length() - 1)));
                }
            });
        }
        assertThat(timeouts).isNotEmpty();
        for (double limit : timeouts) {
            assertThat(seconds).as("p99 threshold vs Envoy's message_timeout %ss", limit)
                    .isLessThan(limit).isGreaterThanOrEqualTo(limit / 2);
        }
    }
}
