package io.scrouter.extproc.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The dashboard must only chart metrics the router really exports, under their exact names. */
class GrafanaDashboardTest {

    private static final Pattern METRIC = Pattern.compile("scrouter_[a-z_]+");
    /** A range selector: {@code [5m]}, {@code [$__rate_interval]}. */
    private static final Pattern RANGE = Pattern.compile("\\[([^\\]]+)\\]");

    @Test
    void everyMetricTheDashboardQueriesIsExported() throws Exception {
        Path dashboard = Path.of("..", "grafana", "scrouter-dashboard.json");
        JsonNode root = new ObjectMapper().readTree(Files.readString(dashboard));
        Set<String> queried = new HashSet<>();
        for (JsonNode panel : root.get("panels")) {
            assertThat(panel.get("datasource").get("uid").asText()).isEqualTo("${datasource}");
            for (JsonNode target : panel.get("targets")) {
                Matcher m = METRIC.matcher(target.get("expr").asText());
                while (m.find()) {
                    queried.add(m.group());
                }
            }
        }
        assertThat(queried).hasSizeGreaterThan(10);
        assertThat(rangesOf(root)).as("every rate window is Grafana's $__rate_interval, which follows the "
                + "scrape interval and the zoom; a fixed [1m] shows nothing under a 1m scrape interval")
                .isNotEmpty().containsOnly("$__rate_interval");

        Set<String> exported = new HashSet<>();
        try (SparkRestStandIn rest = new SparkRestStandIn();
             RouterServer rs = RouterServer.start(ConfigLoader.parse("""
                     server: {bindAddress: 127.0.0.1, port: 0}
                     pool: {static: [{id: a, grpc: "127.0.0.1:24001", metricsUrl: "%s"}]}
                     """.formatted(rest.url()), Map.of()))) {
            // Every registered metric, including labelled ones that have no sample yet (the text format omits
            // those until the first observation).
            for (MetricSnapshot snapshot : rs.metrics().registry().scrape()) {
                String name = snapshot.getMetadata().getPrometheusName();
                if (snapshot instanceof CounterSnapshot) {
                    exported.add(name + "_total");
                } else if (snapshot instanceof HistogramSnapshot) {
                    exported.add(name + "_bucket");
                    exported.add(name + "_count");
                    exported.add(name + "_sum");
                } else {
                    exported.add(name);
                }
            }
        }
        assertThat(exported).containsAll(queried);
    }

    private static Set<String> rangesOf(JsonNode dashboard) {
        Set<String> ranges = new HashSet<>();
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                Matcher m = RANGE.matcher(target.get("expr").asText());
                while (m.find()) {
                    ranges.add(m.group(1));
                }
            }
        }
        return ranges;
    }
}
