package io.scrouter.loadtest;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class CliTest {

    private static final String ROOT = "io.scrouter.loadtest.LoadtestCommand";

    /** Commands run as a user runs them (their own JVM, through main), with bad input: one clear line, exit 2, no trace. */
    @Test
    void badInputToEveryCommandEndsWithOneClearLineAndNoStackTrace() throws Exception {
        record Case(List<String> args, String expected) {
        }
        List<Case> cases = List.of(
                new Case(List.of("matrix", "--bogus", "1"), "Unknown options: '--bogus', '1'"),
                new Case(List.of("matrix", "--tuning-seeds", "1-3", "--held-out-seeds", "3-4"),
                        "must not share a seed"),
                new Case(List.of("matrix", "--scenarios", "steady", "--contenders", "nope"),
                        "unknown contender 'nope'"),
                new Case(List.of("compare"), "Missing required option: '--scenario=NAME|FILE'"),
                new Case(List.of("compare", "--scenario", "steady", "--contenders",
                        "predicted:0.4/32/often"), "the count is 'recent' or 'bound'"),
                new Case(List.of("groups", "--scenario", "steady"), "needs teams and cluster.groups"),
                new Case(List.of("sweep", "--scenarios", "steady"),
                        "Missing required option: '--variants=NAME'"),
                new Case(List.of("compare", "--scenario", "steady", "--set", "cluster.slots=8"),
                        "'cluster.slots' is not a known key"),
                new Case(List.of("compare", "--scenario", "nowhere.yaml"), "no scenario file"),
                new Case(List.of("scenario", "--scenario", "steady", "--set", "x"),
                        "must look like key.path=value"),
                new Case(List.of("fit", "--log", "/nonexistent.csv", "--out", "/tmp/x.yaml"),
                        "no log file"),
                new Case(List.of("trace", "--scenario", "steady", "--seed", "one"),
                        "Invalid value for option '--seed': 'one' is not a long"),
                new Case(List.of("replay-spark", "--policies", "seed", "--max-sesions", "3"),
                        "Unknown options: '--max-sesions', '3'; did you mean --max-sessions"),
                new Case(List.of("replay-spark", "--policies", "seed", "--speed", "3"),
                        "--speed belongs to replaying a trace against --remote"),
                new Case(List.of("replay", "--target", "localhost", "--trace", "t.jsonl"),
                        "give host:port, for example 127.0.0.1:9002, not 'localhost'"),
                new Case(List.of("replay", "--target", "127.0.0.1:9002", "--trace", "/nonexistent.jsonl"),
                        "/nonexistent.jsonl: no such file or directory"),
                new Case(List.of("bench", "--rounds", "-1"), "--rounds must be between 1 and 20, not -1"));
        for (Case c : cases) {
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Dscrouter.scenarios=" + Path.of("scenarios").toAbsolutePath(), "-cp",
                    System.getProperty("java.class.path"), ROOT));
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
