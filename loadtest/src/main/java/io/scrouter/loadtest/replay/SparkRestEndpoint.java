package io.scrouter.loadtest.replay;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.scrouter.scorer.LoadSample;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The part of a Spark driver's monitoring REST API that the router's probe reads ({@code /api/v1/applications},
 * its {@code executors} and active {@code stages}), answering from a live load. Unlike extproc's test stand-in
 * it binds a chosen port, so a static pool written before the run can name it, and it counts probes, so a
 * replay can wait until the service has actually seen its replicas.
 */
final class SparkRestEndpoint implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String APP_ID = "local-replay";

    private final HttpServer server;
    private final Supplier<LoadSample> load;
    private final AtomicLong probes = new AtomicLong();

    SparkRestEndpoint(int port, Supplier<LoadSample> load) throws IOException {
        this.load = load;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
        } catch (java.net.BindException e) {
            throw new IOException("cannot serve simulated Spark REST on 127.0.0.1:" + port
                    + " (in use?); choose another --metrics-base-port", e);
        }
        server.createContext("/api/v1/applications", this::answer);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    long probes() {
        return probes.get();
    }

    private void answer(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        ArrayNode body = JSON.createArrayNode();
        if (path.endsWith("/executors")) {
            probes.incrementAndGet();
            LoadSample s = load.get();
            body.addObject().put("id", "driver").put("isActive", true).put("maxTasks", s.maxTasks())
                    .put("activeTasks", s.activeTasks()).put("totalCores", s.maxTasks());
        } else if (path.endsWith("/stages")) {
            // One active stage carrying every waiting task is enough: the probe sums numTasks minus the
            // active and completed ones over active stages.
            LoadSample s = load.get();
            if (s.pendingTasks() > 0) {
                body.addObject().put("status", "ACTIVE").put("stageId", 1)
                        .put("numTasks", s.pendingTasks() + s.activeTasks())
                        .put("numActiveTasks", s.activeTasks()).put("numCompletedIndices", 0);
            }
        } else {
            body.addObject().put("id", APP_ID).put("name", "Spark Connect server (replay)");
        }
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
