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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The loadtest command line as a user meets it, run in-process through {@link LoadtestCommand#commandLine}. */
class LoadtestCommandLineTest {

    /** What one run printed and returned. */
    record Run(int exit, String out, String err) {

        /** A usage error: exit 2, one line on stderr that names the command, nothing on stdout, no stack trace. */
        Run isOneLineUsageError(String command) {
            assertThat(exit).as(err).isEqualTo(2);
            assertThat(out).isEmpty();
            assertThat(err).startsWith("loadtest " + command + ": ").doesNotContain("Exception").doesNotContain("\tat ");
            assertThat(err.strip().lines()).as(err).hasSize(1);
            return this;
        }
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

    /** Every command, as registered (help, picocli's own, left out: it has no --version). */
    static List<String> commands() {
        List<String> names = new ArrayList<>(LoadtestCommand.commandLine(Map.of(), new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter())).getSubcommands().keySet());
        names.remove("help");
        return names;
    }

    // --- --help and --version everywhere

    @Test
    void theRootListsEveryCommandInItsHelp() {
        Run r = run("--help");

        assertThat(r.exit()).isZero();
        assertThat(r.out()).startsWith("Usage: loadtest ").contains("LOADTEST_<OPTION>");
        for (String c : commands()) {
            assertThat(r.out()).as(c).containsPattern("(?m)^  " + Pattern.quote(c) + "\\b");
        }
    }

    @Test
    void theRootAndEveryCommandAnswerHelpAndVersionWithoutRunning() {
        List<List<String>> lines = new ArrayList<>();
        lines.add(List.of());
        commands().forEach(c -> lines.add(List.of(c)));
        for (List<String> command : lines) {
            String name = String.join(" ", command);
            for (String help : List.of("--help", "-h")) {
                Run r = run(with(command, help));
                assertThat(r.exit()).as(name + " " + help + ": " + r.err()).isZero();
                assertThat(r.out()).as(name).startsWith("Usage: loadtest" + (name.isEmpty() ? "" : " " + name) + " ")
                        .contains("--version");
                assertThat(r.err()).as(name).isEmpty();
            }
            for (String version : List.of("--version", "-V")) {
                Run r = run(with(command, version));
                assertThat(r.exit()).as(name + " " + version).isZero();
                // The project's version as Maven built it, never the "unknown" of a copy outside the build.
                assertThat(r.out()).as(name).containsPattern("^scrouter \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\R")
                        .contains("Java ");
            }
        }
        // picocli's help command, too: help COMMAND is COMMAND --help.
        assertThat(run("help", "compare").out()).isEqualTo(run("compare", "--help").out());
    }

    private static String[] with(List<String> command, String flag) {
        List<String> args = new ArrayList<>(command);
        args.add(flag);
        return args.toArray(String[]::new);
    }

    // --- wrong input: one line, exit 2, the closest valid name

    @Test
    void aMisspeltOptionIsNamedWithTheClosestValidOne() {
        Run r = run("compare", "--scenaro", "steady").isOneLineUsageError("compare");

        // Not "missing --scenario": the misspelling explains that.
        assertThat(r.err()).contains("Unknown options: '--scenaro', 'steady'").contains("did you mean --scenario?")
                .contains("(see: loadtest compare --help)");
        assertThat(run("bench", "--inflight", "8").isOneLineUsageError("bench").err())
                .contains("did you mean --in-flight");
        assertThat(run("matrix", "--held-out-seed", "4-5").isOneLineUsageError("matrix").err())
                .contains("did you mean --held-out-seeds");
    }

    @Test
    void aMisspeltCommandIsNamedWithTheClosestValidOne() {
        Run r = run("compair", "--scenario", "steady");

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip().lines()).hasSize(1);
        assertThat(r.err()).startsWith("loadtest: ").contains("'compair'").contains("did you mean compare");
    }

    @Test
    void aWrongValueIsOneLineThatSaysWhatIsAccepted() {
        assertThat(run("compare", "--scenario", "steady", "--seeds", "abc").isOneLineUsageError("compare").err())
                .contains("Invalid value for option '--seeds'").contains("give seeds such as 4-10")
                .contains("not 'abc'");
        assertThat(run("bench", "--rounds", "-1").isOneLineUsageError("bench").err())
                .contains("--rounds must be between 1 and 20, not -1");
        assertThat(run("fit", "--log", "x.csv", "--out", "y.yaml", "--bin", "often").isOneLineUsageError("fit").err())
                .contains("give a duration such as 250ms, 10s, 30m or 2h, not 'often'");
        assertThat(run("compare", "--scenario", "steady", "--threads", "0").isOneLineUsageError("compare").err())
                .contains("--threads must be between 1 and 256, not 0");
        assertThat(run("replay", "--target", "127.0.0.1:0", "--trace", "t.jsonl").isOneLineUsageError("replay").err())
                .contains("must be a number from 1 to 65535");
    }

    @Test
    void strayWordsMissingValuesAndRepeatsAreRejected() {
        assertThat(run("scenario", "steady").isOneLineUsageError("scenario").err()).contains("'steady'");
        assertThat(run("scenario", "--scenario").isOneLineUsageError("scenario").err())
                .contains("Missing required parameter for option '--scenario'");
        assertThat(run("scenario", "--scenario", "steady", "--scenario", "demo").isOneLineUsageError("scenario").err())
                .contains("--scenario").contains("only once");
        assertThat(run("scenario", "--scenario", "steady", "--list").isOneLineUsageError("scenario").err())
                .contains("not both");
    }

    @Test
    void setIsRepeatableInBothFormsAndAppliedInOrder() {
        Run r = run("scenario", "--scenario", "steady", "--set", "cluster.routers=3", "--set=cluster.routers=2",
                "--set", "cluster.replicas=[4,4]");

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("\n  replicas:\n  - 4\n  - 4\n  routers: 2\n");
    }

    // --- defaults from the environment

    @Test
    void anEnvironmentVariableSetsAnOptionsDefaultAndTheCommandLineWins() {
        Map<String, String> env = Map.of("LOADTEST_SCENARIO", "demo", "LOADTEST_SEEDS", "2-3");

        assertThat(run(env, "scenario").out()).containsPattern("(?m)^name: demo$");
        assertThat(run(env, "scenario", "--scenario", "steady").out()).containsPattern("(?m)^name: steady$");
        assertThat(run(env, "compare", "--help").out()).contains("(default: 2-3)");
        assertThat(run(Map.of("LOADTEST_SEEDS", "abc"), "compare", "--scenario", "steady")
                .isOneLineUsageError("compare").err()).contains("--seeds").contains("'abc'");
        // A blank variable counts as unset, as in the router's command line.
        assertThat(run(Map.of("LOADTEST_SCENARIO", " "), "scenario").isOneLineUsageError("scenario").err())
                .contains("give --scenario NAME|FILE, or --list");
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


    @Test
    void aMissingRedisServerIsOneLineThatSaysHowToInstallIt() {
        // The commands that start Redis (bench, fault-redis, sentinel, ...) meet a machine without it at their start;
        // uninstalling it here is not possible, so a command throws what RedisProcess throws then.
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        picocli.CommandLine line = LoadtestCommand.commandLine(Map.of(), new PrintWriter(out, true),
                new PrintWriter(err, true));
        line.addSubcommand(new NeedsRedis());
        // Added after the registered commands were given the writers: given them as they were.
        line.getSubcommands().get("needs-redis").setErr(new PrintWriter(err, true));

        int exit = line.execute("needs-redis");

        assertThat(exit).isEqualTo(1);
        assertThat(err.toString().strip()).startsWith("loadtest needs-redis: redis-server is not installed")
                .contains("apt-get install -y redis-server").doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(err.toString().strip().lines()).hasSize(1);
        assertThat(out.toString()).isEmpty();
    }
    /** A command that starts Redis, on a machine without it. */
    @picocli.CommandLine.Command(name = "needs-redis")
    static final class NeedsRedis implements java.util.concurrent.Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            throw new io.scrouter.testkit.redis.RedisProcess.NotInstalled();
        }
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
