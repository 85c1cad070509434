package io.scrouter.loadtest;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CliTest {

    private static final String ROOT = "io.scrouter.loadtest.LoadtestCommand";

    @Test
    void argsRejectUnknownOptionsStrayWordsMissingValuesAndRepeats() {
        Set<String> known = Set.of("scenario", "set");
        assertThatThrownBy(() -> new Args(new String[] {"--scenaro", "x"}, known, Set.of(), Set.of("set"), "u"))
                .hasMessage("unknown option --scenaro; usage: u");
        assertThatThrownBy(() -> new Args(new String[] {"steady"}, known, Set.of(), Set.of("set"), "u"))
                .hasMessage("unexpected argument 'steady'; usage: u");
        assertThatThrownBy(() -> new Args(new String[] {"--scenario"}, known, Set.of(), Set.of("set"), "u"))
                .hasMessage("--scenario needs a value; usage: u");
        assertThatThrownBy(() -> new Args(new String[] {"--scenario", "a", "--scenario", "b"}, known, Set.of(),
                Set.of("set"), "u")).hasMessage("--scenario given twice; usage: u");
        assertThatThrownBy(() -> new Args(new String[] {"--list=yes"}, known, Set.of("list"), Set.of(), "u"))
                .hasMessage("--list takes no value; usage: u");
        Args ok = new Args(new String[] {"--set", "a=1", "--set=b=2", "--scenario=s"}, known, Set.of(), Set.of("set"), "u");
        assertThat(ok.all("set")).containsExactly("a=1", "b=2");
        assertThat(ok.get("scenario", null)).isEqualTo("s");
    }

    @Test
    void seedsAndNumbersAreCheckedWithTheOptionNamed() {
        Args a = new Args(new String[] {"--seeds", "1-3,7", "--threads", "x", "--bad", "4-2"},
                Set.of("seeds", "threads", "bad"), "u");
        assertThat(a.seeds("seeds", "1")).containsExactly(1L, 2L, 3L, 7L);
        assertThatThrownBy(() -> a.seeds("bad", "1")).hasMessageContaining("--bad must be seeds such as 4-10");
        assertThatThrownBy(() -> a.getLong("threads", 1)).hasMessage("--threads must be a whole number, got 'x'");
        Args b = new Args(new String[] {"--threads", "0"}, Set.of("threads"), "u");
        assertThatThrownBy(() -> b.getLong("threads", 1, 1, 256)).hasMessage("--threads must be between 1 and 256, got 0");
    }

    /** Every command added for the matrix, run as a user would, with bad input: one clear line, exit 2, no trace. */
    @Test
    void badInputToEveryCommandEndsWithOneClearLineAndNoStackTrace() throws Exception {
        record Case(String mainClass, List<String> args, String expected) {
        }
        List<Case> cases = List.of(
                new Case(ROOT, List.of("matrix", "--bogus", "1"), "Unknown options: '--bogus', '1'"),
                new Case(ROOT, List.of("matrix", "--tuning-seeds", "1-3", "--held-out-seeds", "3-4"),
                        "must not share a seed"),
                new Case(ROOT, List.of("matrix", "--scenarios", "steady", "--contenders", "nope"),
                        "unknown contender 'nope'"),
                new Case(ROOT, List.of("compare"), "Missing required option: '--scenario=NAME|FILE'"),
                new Case(ROOT, List.of("compare", "--scenario", "steady", "--contenders",
                        "predicted:0.4/32/often"), "the count is 'recent' or 'bound'"),
                new Case(ROOT, List.of("groups", "--scenario", "steady"), "needs teams and cluster.groups"),
                new Case(ROOT, List.of("sweep", "--scenarios", "steady"),
                        "Missing required option: '--variants=NAME'"),
                new Case(ROOT, List.of("compare", "--scenario", "steady", "--set", "cluster.slots=8"),
                        "'cluster.slots' is not a known key"),
                new Case(ROOT, List.of("compare", "--scenario", "nowhere.yaml"), "no scenario file"),
                new Case(ROOT, List.of("scenario", "--scenario", "steady", "--set", "x"),
                        "must look like key.path=value"),
                new Case(ROOT, List.of("fit", "--log", "/nonexistent.csv", "--out", "/tmp/x.yaml"),
                        "no log file"),
                new Case(ROOT, List.of("trace", "--scenario", "steady", "--seed", "one"),
                        "Invalid value for option '--seed': 'one' is not a long"),
                new Case("io.scrouter.loadtest.replay.SparkReplayCommand", List.of("--policies", "seed", "--sessons", "3"),
                        "unknown option --sessons"));
        for (Case c : cases) {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Dscrouter.scenarios=" + Path.of("scenarios").toAbsolutePath(), "-cp",
                    System.getProperty("java.class.path"), c.mainClass()));
            cmd.addAll(c.args());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(c.toString()).isTrue();
            assertThat(p.exitValue()).as(c + ": " + out).isEqualTo(2);
            assertThat(out).as(c.toString()).contains(c.expected()).doesNotContain("\tat ").doesNotContain("Exception");
            assertThat(out.strip().lines().count()).as(c + ": " + out).isEqualTo(1);
        }
    }
}
