package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ScenarioFitTest {

    /** A log written from a known scenario must give that scenario's clients back, within sampling error. */
    @Test
    void aLogOfAKnownScenarioFitsBackToItsParameters(@TempDir Path dir) throws IOException {
        ScenarioSpec truth = ScenarioFiles.load("burst-5s-small", List.of("clients.loop=open"));
        Path log = dir.resolve("log.jsonl");
        try (Writer w = Files.newBufferedWriter(log)) {
            TraceFormat.write(TraceRenderer.render(new Workload(truth, 1)), w);
        }
        ScenarioSpec fitted = ScenarioFit.fit(ArrivalLog.read(log), ScenarioFiles.load("steady"), "fitted", 600_000).spec();
        ScenarioSpec.Clients c = fitted.clients();

        // Six crowds of 24 within 5 s, found as bursts; the steady rate apart from them.
        assertThat(c.bursts()).hasSize(6);
        c.bursts().forEach(b -> {
            assertThat(b.sessions()).isBetween(22, 28);
            // A background start next to a crowd may join it, stretching the window by a few seconds.
            assertThat(b.overMillis()).isLessThanOrEqualTo(10_000);
        });
        double meanRate = c.profile().stream().skip(1).mapToDouble(ScenarioSpec.RateStep::sessionsPerSecond)
                .average().orElse(0);
        assertThat(meanRate).isCloseTo(0.024, within(0.006));
        // The sessions open at the start all arrive in the log's first minutes: the first bin carries them.
        assertThat(c.profile().get(0).sessionsPerSecond()).isGreaterThan(0.05);
        assertThat(c.taskTime().medianMillis()).isCloseTo(200, within(20.0));
        assertThat(c.taskTime().sigma()).isCloseTo(0.8, within(0.1));
        assertThat(c.tasks().get(0)).isEqualTo(new ScenarioSpec.TaskWeight(1, c.tasks().get(0).weight()));
        assertThat(c.tasks().get(0).weight()).isCloseTo(0.25, within(0.03));
        assertThat(c.tasks().stream().mapToInt(ScenarioSpec.TaskWeight::tasks).max().orElse(0)).isEqualTo(1024);
        // Think time as seen (gaps between queries, intensity included): about the 30 s median.
        assertThat(c.think().medianMillis()).isCloseTo(30_000, within(6_000.0));
        assertThat(c.firstQueryAfterMillis()).isBetween(2_000L, 4_500L);
        assertThat(fitted.cluster()).isEqualTo(ScenarioFiles.load("steady").cluster());
        // It is a valid scenario: it reads back from its own YAML.
        assertThat(ScenarioFiles.parse(ScenarioFiles.toYaml(fitted), List.of())).isEqualTo(fitted);
    }

    @Test
    void csvLogsOfSessionStartsAreReadWithIsoOrEpochTimes(@TempDir Path dir) throws IOException {
        Path csv = dir.resolve("starts.csv");
        StringBuilder sb = new StringBuilder("time,session\n");
        for (int i = 0; i < 40; i++) {
            sb.append(i % 2 == 0 ? String.valueOf(1_764_500_000_000L + i * 30_000L)
                    : java.time.Instant.ofEpochMilli(1_764_500_000_000L + i * 30_000L).toString()).append(",s").append(i)
                    .append('\n');
        }
        Files.writeString(csv, sb);
        List<TraceEvent> log = ArrivalLog.read(csv);
        assertThat(log).hasSize(40);
        assertThat(log.get(1).atMillis()).isEqualTo(30_000);
        ScenarioSpec fitted = ScenarioFit.fit(log, ScenarioFiles.load("steady"), "csv", 300_000).spec();
        // One start every 30 s.
        assertThat(fitted.clients().profile().get(0).sessionsPerSecond()).isCloseTo(1 / 30.0, within(0.002));
        assertThat(fitted.clients().bursts()).isEmpty();
    }

    @Test
    void badLogsSayWhatIsWrongAndWhere(@TempDir Path dir) throws IOException {
        Path csv = dir.resolve("bad.csv");
        Files.writeString(csv, "1000,a\nyesterday,b\n");
        assertThatThrownBy(() -> ArrivalLog.read(csv)).hasMessageContaining("line 2")
                .hasMessageContaining("epoch milliseconds or ISO-8601");
        Files.writeString(csv, "1000,a,query\n");
        assertThatThrownBy(() -> ArrivalLog.read(csv)).hasMessageContaining("a query needs tasks and taskMs");
        Files.writeString(csv, "1000,a,restart\n");
        assertThatThrownBy(() -> ArrivalLog.read(csv)).hasMessageContaining("event must be start, query or end");
        assertThatThrownBy(() -> ArrivalLog.read(dir.resolve("missing.csv"))).hasMessageContaining("no log file");
        Files.writeString(csv, "1000,a\n");
        assertThatThrownBy(() -> ScenarioFit.fit(ArrivalLog.read(csv), ScenarioFiles.load("steady"), "x", 60_000))
                .hasMessageContaining("a fit needs at least 2");
    }
}
