package io.scrouter.extproc;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code run}, also what {@code scrouter} does without a command: serves ext_proc until SIGTERM, then drains
 * (see {@link RouterServer#drainAndClose()}). Without {@code --config}, the embedded default runs: an in-memory
 * session store and a static pool of two local replicas, so the service can be tried with nothing else installed.
 */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        description = "Run the router: serve Envoy's ext_proc and pin each Spark Connect session to its replica.",
        footer = "%nEvery option also reads SCROUTER_<OPTION> from the environment, for example SCROUTER_CONFIG.")
public final class RunCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);
    static final String DEFAULT_CONFIG = "/default-config.yaml";

    static final String CONFIG_HELP = "Router configuration (YAML). Without it, the embedded default: an "
            + "in-memory store and a static pool of 127.0.0.1:15002 and 127.0.0.1:15003.";

    @Option(names = "--config", paramLabel = "FILE", description = CONFIG_HELP)
    Path config;

    private final Map<String, String> env;

    RunCommand(Map<String, String> env) {
        this.env = env;
    }

    @Override
    public Integer call() throws InterruptedException {
        RouterConfig routerConfig = load();
        RouterServer server;
        try {
            server = RouterServer.start(routerConfig);
        } catch (Exception e) {
            // Exit rather than linger: client threads (Redis, Netty) would otherwise keep a dead process alive.
            LOG.error("could not start: {}", e.toString(), e);
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM (a rollout, a scale-in): drain first, so Envoy moves to the other routers before this one stops.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.drainAndClose();
            stopped.countDown();
        }, "scrouter-shutdown"));
        stopped.await();
        return 0;
    }

    RouterConfig load() {
        if (config != null) {
            return ConfigLoader.load(config, env);
        }
        try (InputStream in = RunCommand.class.getResourceAsStream(DEFAULT_CONFIG)) {
            String yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            LOG.info("no --config given: running the embedded default (in-memory store, static pool)");
            return ConfigLoader.parse(yaml, env);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
