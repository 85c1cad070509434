package io.scrouter.extproc;

import io.scrouter.extproc.publisher.PublisherCommand;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The router's command line as a new user meets it: help and version everywhere, a misspelt option named with
 * its closest valid spelling, a wrong value answered with a sentence rather than a stack trace, and option
 * defaults from the environment. Only parsing and the error paths run here; {@code run} and {@code publish}
 * themselves are exercised by the process tests (ExtProcProcess, PublisherDrainTest).
 */
class CommandLineTest {

    /** What one invocation printed and returned. */
    private record Outcome(int exit, String out, String err) {
    }

    private static Outcome execute(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.commandLine(env, new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
        return new Outcome(exit, out.toString(), err.toString());
    }

    private static Outcome execute(String... args) {
        return execute(Map.of(), args);
    }

    @Test
    void helpListsEveryCommandAndExitsZero() {
        for (String help : new String[] {"--help", "-h", "help"}) {
            Outcome o = execute(help);
            assertThat(o.exit()).as(help).isZero();
            assertThat(o.out()).as(help).contains("Usage: scrouter", "run", "check", "publish", "--config",
                    "SCROUTER_REPLICA_");
        }
    }

    @Test
    void everyCommandAnswersHelpAndVersion() {
        for (String command : new String[] {"run", "check", "publish"}) {
            Outcome help = execute(command, "--help");
            assertThat(help.exit()).as(command).isZero();
            assertThat(help.out()).as(command).contains("Usage: scrouter " + command);
            Outcome version = execute(command, "--version");
            assertThat(version.exit()).as(command).isZero();
            assertThat(version.out()).as(command).startsWith("scrouter ").doesNotContain("${");
        }
        assertThat(execute("--version").out()).startsWith("scrouter ");
    }

    @Test
    void misspeltOptionsAreRejectedWithTheClosestName() {
        Outcome o = execute("publish", "--id", "a", "--grpc", "h:1", "--metrics-url", "http://h:4040",
                "--drian-for", "60s", "--tll", "5s");
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("Unknown options: '--drian-for'", "--drain-for");
        Outcome alone = execute("publish", "--drian-for", "60s", "--tll", "5s");
        assertThat(alone.exit()).isEqualTo(2);
        assertThat(alone.err()).contains("Unknown options: '--drian-for'", "--drain-for");
        Outcome top = execute("--confg", "x.yaml");
        assertThat(top.exit()).isEqualTo(2);
        assertThat(top.err()).contains("--confg", "--config");
        Outcome command = execute("chek");
        assertThat(command.exit()).isEqualTo(2);
        assertThat(command.err()).contains("chek", "check");
    }

    @Test
    void wrongValuesGetASentenceNotAStackTrace() {
        Outcome times = execute("check", "--times", "abc");
        assertThat(times.exit()).isEqualTo(2);
        assertThat(times.err()).contains("--times", "abc").doesNotContain("Exception", "\tat ");

        Outcome target = execute("check", "--target", "localhost");
        assertThat(target.exit()).isEqualTo(2);
        assertThat(target.err()).contains("host:port", "localhost").doesNotContain("\tat ");

        Outcome outOfRange = execute("check", "--times", "0");
        assertThat(outOfRange.exit()).isEqualTo(2);
        assertThat(outOfRange.err()).contains("--times must be from 1 to 1000");

        Outcome ttl = execute("publish", "--id", "a", "--grpc", "h:1", "--metrics-url", "http://h:4040",
                "--ttl", "ten");
        assertThat(ttl.exit()).isEqualTo(2);
        assertThat(ttl.err()).contains("--ttl", "10s").doesNotContain("\tat ");

        Outcome missing = execute("publish", "--id", "a");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("Missing required options", "--grpc", "--metrics-url");
    }

    @Test
    void aConfigurationErrorFoundWhileRunningNamesItsKeyAndExitsTwo() {
        // Valid flags, but no Redis to publish to: the command starts, finds out, and says what to set.
        Outcome o = execute("publish", "--id", "a", "--grpc", "h:1", "--metrics-url", "http://h:4040");
        assertThat(o.exit()).isEqualTo(2);
        assertThat(o.err()).contains("scrouter publish:", "SCROUTER_REDIS_ADDRESS").doesNotContain("\tat ");

        Outcome interval = execute("publish", "--id", "a", "--grpc", "h:1", "--metrics-url", "http://h:4040",
                "--ttl", "2s", "--interval", "2s");
        assertThat(interval.exit()).isEqualTo(2);
        assertThat(interval.err()).contains("--ttl", "twice --interval");

        Outcome config = execute("run", "--config", "/nonexistent/scrouter.yaml");
        assertThat(config.exit()).isEqualTo(2);
        assertThat(config.err()).contains("/nonexistent/scrouter.yaml").doesNotContain("\tat ");
    }

    @Test
    void optionsDefaultFromTheEnvironmentAndFlagsWin() {
        Map<String, String> env = Map.of("SCROUTER_REPLICA_ID", "spark-7", "SCROUTER_REPLICA_GRPC", "10.0.0.5:15002",
                "SCROUTER_REPLICA_METRICS_URL", "http://10.0.0.5:4040", "SCROUTER_REPLICA_DRAIN_FOR", "45s",
                "SCROUTER_REPLICA_TTL", " ");
        CommandLine line = Main.commandLine(env, new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter()));
        ParseResult parsed = line.parseArgs("publish", "--id", "spark-8");
        PublisherCommand publish = parsed.subcommand().commandSpec().commandLine().getCommand();
        assertThat(publish).extracting("id", "grpc", "drainFor", "ttl")
                .containsExactly("spark-8", "10.0.0.5:15002", Duration.ofSeconds(45), Duration.ofSeconds(10));
    }
}
