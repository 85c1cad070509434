package io.scrouter.extproc;

import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.CheckCommand;
import io.scrouter.extproc.publisher.PublisherCommand;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Entry point. {@code java -jar extproc-all.jar [--config FILE]}: without a file, the embedded default
 * (in-memory store, a static pool of two local replicas) runs, so the service can be tried with nothing else
 * installed. {@code java -jar extproc-all.jar publish ...} runs the replica publisher sidecar instead
 * ({@link PublisherCommand}), and {@code check} asks a running router where a request would go
 * ({@link CheckCommand}).
 */
public final class Main {

    static {
        // Must run before the first logger exists: picks the JSON layout for log pipelines.
        if ("json".equalsIgnoreCase(System.getenv("SCROUTER_LOG_FORMAT"))
                && System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "logback-json.xml");
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(Main.class);
    static final String DEFAULT_CONFIG = "/default-config.yaml";

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
        if (args.length > 0 && args[0].equals("publish")) {
            try {
                PublisherCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.getenv());
            } catch (ConfigException | IllegalArgumentException e) {
                System.err.println("scrouter publish: " + e.getMessage());
                System.exit(2);
            }
            return;
        }
        if (args.length > 0 && args[0].equals("check")) {
            try {
                System.exit(CheckCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out));
            } catch (IllegalArgumentException e) {
                System.err.println("scrouter check: " + e.getMessage());
                System.exit(2);
            }
            return;
        }
        RouterConfig config;
        try {
            config = loadConfig(args);
        } catch (ConfigException | IllegalArgumentException e) {
            System.err.println("scrouter: " + e.getMessage());
            System.exit(2);
            return;
        }
        RouterServer server;
        try {
            server = RouterServer.start(config);
        } catch (Exception e) {
            // Exit rather than linger: client threads (Redis, Netty) would otherwise keep a dead process alive.
            LOG.error("could not start: {}", e.toString(), e);
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // SIGTERM (a rollout, a scale-in): drain first, so Envoy moves to the other routers before this one stops.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.drainAndClose();
            stopped.countDown();
        }, "scrouter-shutdown"));
        stopped.await();
    }

    static RouterConfig loadConfig(String[] args) throws IOException {
        String file = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--config") && i + 1 < args.length) {
                file = args[++i];
            } else if (args[i].startsWith("--config=")) {
                file = args[i].substring("--config=".length());
            } else {
                throw new IllegalArgumentException("unknown argument '" + args[i] + "'; usage: [--config FILE]");
            }
        }
        if (file != null) {
            return ConfigLoader.load(Path.of(file), System.getenv());
        }
        try (InputStream in = Main.class.getResourceAsStream(DEFAULT_CONFIG)) {
            String yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            LOG.info("no --config given: running the embedded default (in-memory store, static pool)");
            return ConfigLoader.parse(yaml, System.getenv());
        }
    }
}
