package io.scrouter.testkit.spark;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Serves the three Spark monitoring REST endpoints the probe reads, in Spark 4.2's shape, with a load the
 * test sets. Stands in for a driver's UI port when the test is about routing, not about Spark itself.
 */
public final class SparkRestStandIn implements AutoCloseable {

    private final HttpServer server;
    private volatile long active;
    private volatile long pending;
    private volatile long slots = 2;
    private volatile boolean failing;
    private final AtomicLong served = new AtomicLong();

    public SparkRestStandIn() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        server.createContext("/api/v1/applications", exchange -> {
            String path = exchange.getRequestURI().getPath();
            String body;
            int status = 200;
            if (failing) {
                status = 503;
                body = "down";
            } else if (path.endsWith("/executors")) {
                body = "[{\"id\":\"driver\",\"isActive\":true,\"maxTasks\":" + slots + ",\"activeTasks\":" + active
                        + ",\"totalCores\":" + slots + "}]";
            } else if (path.endsWith("/stages")) {
                body = pending == 0 ? "[]" : "[{\"status\":\"ACTIVE\",\"stageId\":1,\"numTasks\":" + (pending + active)
                        + ",\"numActiveTasks\":" + active + ",\"numCompletedIndices\":0}]";
            } else {
                body = "[{\"id\":\"local-1700000000000\",\"name\":\"Spark Connect server\"}]";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
            served.incrementAndGet();
        });
        server.start();
    }

    /** Sets the load: {@code active} running tasks and {@code pending} waiting ones on {@code slots} slots. */
    public SparkRestStandIn load(long active, long pending, long slots) {
        this.active = active;
        this.pending = pending;
        this.slots = slots;
        return this;
    }

    public void failing(boolean failing) {
        this.failing = failing;
    }

    /** Requests answered so far, failed ones included. */
    public long requestsServed() {
        return served.get();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private boolean closed;

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            server.stop(0);
        }
    }
}
