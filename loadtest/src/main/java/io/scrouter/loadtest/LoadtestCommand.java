package io.scrouter.loadtest;

import io.scrouter.extproc.cli.CommandRunner;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.bench.FirstRequests;
import io.scrouter.loadtest.bench.GrpcBench;
import io.scrouter.loadtest.bench.HeapBench;
import io.scrouter.loadtest.bench.JmhBench;
import io.scrouter.loadtest.bench.ProcessBench;
import io.scrouter.loadtest.bench.ProfileBench;
import io.scrouter.loadtest.bench.RedisClientBench;
import io.scrouter.loadtest.bench.RedisHeapBench;
import io.scrouter.loadtest.demo.Demo;
import io.scrouter.loadtest.fault.RedisOutage;
import io.scrouter.loadtest.fault.ReplicaKill;
import io.scrouter.loadtest.fault.SentinelFailover;
import io.scrouter.loadtest.fault.Soak;
import io.scrouter.loadtest.replay.ReplayCommand;
import io.scrouter.loadtest.replay.SparkReplayCommand;
import io.scrouter.testkit.redis.RedisProcess;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Entry point of every load-testing tool, {@code loadtest COMMAND [OPTIONS]} ({@code loadtest/bin/loadtest} starts
 * it with each command's JVM flags). Every command answers {@code --help} and {@code --version}; a wrong option or
 * value, a misspelt scenario key or a missing file ends it with one line naming the problem and exit status 2;
 * options default from {@code LOADTEST_<OPTION>} environment variables.
 */
@Command(name = "loadtest", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        description = "Scenarios, the placement simulator, the real-Spark check, service benchmarks, fault runs "
                + "and the newcomer demo.",
        footer = {"%nRun 'loadtest COMMAND --help' for a command's options and defaults.",
                "Every option also reads " + LoadtestCommand.ENVIRONMENT_PREFIX + "<OPTION> from the environment "
                        + "(--seeds: " + LoadtestCommand.ENVIRONMENT_PREFIX + "SEEDS); a flag on the command line wins."})
public final class LoadtestCommand implements Callable<Integer> {

    /** Prefix of the environment variables that set option defaults: {@code --held-out-seeds} reads LOADTEST_HELD_OUT_SEEDS. */
    public static final String ENVIRONMENT_PREFIX = "LOADTEST_";

    @Spec
    CommandSpec spec;

    private LoadtestCommand() {
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        // Exit even after success: gRPC, Redis and Spark client threads are not all daemons.
        System.exit(commandLine(System.getenv(), out, err).execute(args));
    }

    /** Every command, in the order of {@code loadtest/bin/loadtest}'s header, with option defaults from {@code env}. */
    public static CommandLine commandLine(Map<String, String> env, PrintWriter out, PrintWriter err) {
        CommandLine line = new CommandLine(new LoadtestCommand());
        for (Object command : List.of(new Matrix(), new Compare(), new GroupIsolation(), new Sweep(),
                new DescribeScenario(), new Fit(), new WriteTrace(), new Demo(), new ProcessBench(), new ProfileBench(),
                new ProfileBench.Render(), new RedisClientBench(), new RedisHeapBench(), new GrpcBench(), new JmhBench(),
                new HeapBench(), new FirstRequests(), new ReplicaKill(), new RedisOutage(), new SentinelFailover(), new Soak(),
                new ReplayCommand(), new SparkReplayCommand.Options())) {
            line.addSubcommand(command);
        }
        line.addSubcommand("help", new HelpCommand());
        CommandRunner.configure(line, env, command -> ENVIRONMENT_PREFIX, out, err);
        line.setParameterExceptionHandler((e, args) -> {
            e.getCommandLine().getErr().println(oneLine(e));
            return CommandRunner.USAGE;
        });
        IExecutionExceptionHandler runner = line.getExecutionExceptionHandler();
        line.setExecutionExceptionHandler((e, failed, parsed) -> {
            Throwable cause = e instanceof UncheckedIOException u ? u.getCause() : e;
            if (cause instanceof FileSystemException f) {
                // A path the user gave that cannot be read or written: theirs to fix, like a wrong option.
                failed.getErr().println(failed.getCommandSpec().qualifiedName() + ": " + describe(f));
                return CommandRunner.USAGE;
            }
            if (cause instanceof RedisProcess.NotInstalled missing) {
                // The machine lacks a program the command starts: one line saying how to install it, no trace.
                failed.getErr().println(failed.getCommandSpec().qualifiedName() + ": " + missing.getMessage());
                return CommandLine.ExitCode.SOFTWARE;
            }
            return runner.handleExecutionException(e, failed, parsed);
        });
        return line;
    }

    /**
     * A usage error as one line: what was wrong, the closest valid names for a misspelt one, and where the options
     * are listed. The commands' full usage texts are long; printed after every typo they would bury the one line
     * that matters.
     */
    static String oneLine(ParameterException e) {
        CommandLine failed = e.getCommandLine();
        ParseResult parsed = failed.getParseResult();
        ParameterException shown = e;
        // A misspelt option usually explains the "missing" one: report the misspelling.
        if (!(e instanceof UnmatchedArgumentException) && parsed != null && !parsed.unmatched().isEmpty()) {
            shown = new UnmatchedArgumentException(failed, parsed.unmatched());
        }
        StringBuilder line = new StringBuilder(failed.getCommandSpec().qualifiedName()).append(": ")
                .append(shown.getMessage().strip());
        if (shown instanceof UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty()) {
            List<String> closest = unmatched.getSuggestions();
            line.append("; did you mean ").append(String.join(" or ", closest.subList(0, Math.min(3, closest.size()))))
                    .append('?');
        }
        return line.append(" (see: ").append(failed.getCommandSpec().qualifiedName()).append(" --help)").toString();
    }

    private static String describe(FileSystemException e) {
        String problem = e instanceof NoSuchFileException ? "no such file or directory"
                : e instanceof AccessDeniedException ? "permission denied"
                : e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
        return e.getFile() + ": " + problem;
    }

    /** Without a command: the usage, and exit status 2, since nothing ran. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return CommandRunner.USAGE;
    }
}
