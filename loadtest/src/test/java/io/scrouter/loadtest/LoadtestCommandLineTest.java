package io.scrouter.loadtest;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.workload.TraceRenderer;
import io.scrouter.loadtest.workload.Workload;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The loadtest command line as a user meets it, run in-process through {@link LoadtestCommand#commandLine}. */
class LoadtestCommandLineTest {

    /** What one run printed and returned. */
    record Run(int exit, String out, String err) {
    }

    static Run run(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = LoadtestCommand.commandLine(env, new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    static Run run(String... args) {
        return run(Map.of(), args);
    }

    // --- demo --scenario: documented in loadtest/bin/loadtest's header, and it used to die on "unknown option".

    @Test
    void demoPlaysTheNamedScenarioOnItsClusterAndEverySessionStaysPinned() {
        Run r = run("demo", "--scenario", "demo", "--set", "cluster.replicas=[3,5]", "--speed", "45");

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("replicas [replica-a, replica-b] (task slots [3, 5])")
                .contains("scenario demo: ").contains("every session stayed pinned");
        long sessions = TraceRenderer.render(new Workload(ScenarioFiles.load("demo"), 1)).stream()
                .filter(e -> e instanceof TraceEvent.SessionStart).count();
        assertThat(placedPerReplica(r.out()).values().stream().mapToInt(Integer::intValue).sum())
                .isEqualTo((int) sessions);
        assertThat(placedPerReplica(r.out())).containsOnlyKeys("replica-a", "replica-b");
    }

    @Test
    void demoTakesAScenarioFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("four.yaml");
        Files.writeString(file, "name: four\nsummary: the demo's clients on four replicas\nextends: demo\n"
                + "cluster: {replicas: [2, 2, 2, 2]}\n");

        Run r = run("demo", "--scenario", file.toString(), "--speed", "45");

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("scenario four: the demo's clients on four replicas")
                .contains("every session stayed pinned");
        assertThat(placedPerReplica(r.out())).containsOnlyKeys("replica-a", "replica-b", "replica-c", "replica-d");
    }

    @Test
    void demoOfAMissingScenarioSaysSoInOneLine() {
        Run r = run("demo", "--scenario", "nowhere.yaml");

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).startsWith("loadtest demo: ").contains("nowhere.yaml")
                .doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(r.err().strip().lines()).hasSize(1);
    }

    /** The "sessions per replica" lines of the demo's report. */
    private static Map<String, Integer> placedPerReplica(String out) {
        Matcher m = Pattern.compile("(?m)^  (replica-[a-z]) +#* (\\d+)$").matcher(out);
        Map<String, Integer> placed = new LinkedHashMap<>();
        while (m.find()) {
            placed.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        return placed;
    }
}
