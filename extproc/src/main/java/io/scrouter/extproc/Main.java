package io.scrouter.extproc;

import io.scrouter.extproc.cli.CommandRunner;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.client.CheckCommand;
import io.scrouter.extproc.publisher.PublisherCommand;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Entry point, {@code java -jar extproc-all.jar [COMMAND]}: without a command it runs the router
 * ({@link RunCommand}); {@code check} asks a running router where a request would go ({@link CheckCommand});
 * {@code publish} runs the replica publisher sidecar ({@link PublisherCommand}).
 */
@Command(name = "scrouter", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        description = {"Pins each Spark Connect session to the replica that holds it and places new sessions by "
                + "Spark's own load, as Envoy's external processor (ext_proc).",
                "Without a command, runs the router, as 'run' does."},
        footer = {"%nRun 'scrouter COMMAND --help' for a command's options.",
                "Every option also reads SCROUTER_<OPTION> from the environment (publish: SCROUTER_REPLICA_<OPTION>, "
                        + "check: SCROUTER_CHECK_<OPTION>)."})
public final class Main implements Callable<Integer> {

    static {
        // Must run before the first logger exists: picks the JSON layout for log pipelines.
        if ("json".equalsIgnoreCase(System.getenv("SCROUTER_LOG_FORMAT"))
                && System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "logback-json.xml");
        }
        keepAsyncCompletionsOnPooledThreads();
    }

    /**
     * The JDK's HTTP client (the load probes, the publisher's readiness check) completes every {@code sendAsync}
     * on {@code CompletableFuture}'s default executor ({@code HttpClientImpl.sendAsync}, "makes sure that any
     * dependent actions happen in the CF default executor"). With fewer than 2 threads in the common pool, which is
     * what the JVM picks on 1 or 2 CPUs (a small node, a pod or process pinned to one core), that executor starts a
     * new thread for every task ({@code CompletableFuture.ThreadPerTaskExecutor}): a router probing 4 replicas
     * every second started about 8 threads a second, on the core its event loop needed. Two pooled threads instead,
     * unless the operator set the pool's size. Runs before anything can create the common pool, which reads the
     * property once.
     */
    static void keepAsyncCompletionsOnPooledThreads() {
        String property = "java.util.concurrent.ForkJoinPool.common.parallelism";
        if (System.getProperty(property) == null && Runtime.getRuntime().availableProcessors() <= 2) {
            System.setProperty(property, "2");
        }
    }

    @Option(names = "--config", paramLabel = "FILE", description = RunCommand.CONFIG_HELP)
    Path config;

    private final Map<String, String> env;

    private Main(Map<String, String> env) {
        this.env = env;
    }

    public static void main(String[] args) {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        // Exit even after success: client threads (gRPC, Redis) of check and publish must not keep the JVM alive.
        // After a SIGTERM, run returns while the shutdown hook finishes; exit then simply waits for the hook.
        System.exit(commandLine(System.getenv(), out, err).execute(args));
    }

    /** The whole command line, with option defaults read from {@code env}. */
    public static CommandLine commandLine(Map<String, String> env, PrintWriter out, PrintWriter err) {
        CommandLine line = new CommandLine(new Main(env))
                .addSubcommand("run", new RunCommand(env))
                .addSubcommand("check", new CheckCommand(out))
                .addSubcommand("publish", new PublisherCommand(env))
                .addSubcommand("help", new HelpCommand());
        return CommandRunner.configure(line, env, Main::environmentPrefix, out, err);
    }

    /** Which environment variables set a command's options; see the footer of {@code --help}. */
    static String environmentPrefix(String qualifiedCommandName) {
        return switch (qualifiedCommandName) {
            case "scrouter publish" -> "SCROUTER_REPLICA_";
            case "scrouter check" -> "SCROUTER_CHECK_";
            default -> "SCROUTER_";
        };
    }

    @Override
    public Integer call() throws InterruptedException {
        RunCommand run = new RunCommand(env);
        run.config = config;
        return run.call();
    }
}
