package io.scrouter.loadtest.fault;

import io.scrouter.testkit.redis.RedisProcess;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A router in its own JVM ({@code io.scrouter.extproc.Main --config}), as it runs in production, so that its
 * heap holds the router and nothing of the load generator. Heap is read over JMX (loopback only, no
 * authentication: the port is bound to 127.0.0.1 and lives as long as the run); the near-cache size is
 * read from the router's own Prometheus endpoint.
 */
final class ChildRouter implements AutoCloseable {

    /** Heap used before and after a full collection, in bytes. */
    record Heap(long usedBytes, long liveBytes, long maxBytes) {
    }

    private final Process process;
    private final int port;
    private final int metricsPort;
    private final Path log;
    private final JMXConnector jmx;
    private final MemoryMXBean memory;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    ChildRouter(String yamlWithoutServer, String maxHeap) throws Exception {
        this.port = RedisProcess.freePort();
        this.metricsPort = RedisProcess.freePort();
        int jmxPort = RedisProcess.freePort();
        Path dir = Files.createTempDirectory("soak-router");
        Path config = dir.resolve("router.yaml");
        Files.writeString(config, "server: {bindAddress: 127.0.0.1, port: " + port + "}\n"
                + "metrics: {bindAddress: 127.0.0.1, port: " + metricsPort + "}\n" + yamlWithoutServer);
        this.log = dir.resolve("router.log");
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + maxHeap, "-XX:+UseG1GC",
                "-Dcom.sun.management.jmxremote.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.rmi.port=" + jmxPort,
                "-Dcom.sun.management.jmxremote.host=127.0.0.1",
                "-Dcom.sun.management.jmxremote.authenticate=false",
                "-Dcom.sun.management.jmxremote.ssl=false",
                "-Djava.rmi.server.hostname=127.0.0.1"));
        String logback = System.getProperty("logback.configurationFile");
        if (logback != null) {
            cmd.add("-Dlogback.configurationFile=" + logback);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.scrouter.extproc.Main",
                "--config", config.toString()));
        this.process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            awaitPort(port);
            this.jmx = JMXConnectorFactory.connect(
                    new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + jmxPort + "/jmxrmi"));
            MBeanServerConnection conn = jmx.getMBeanServerConnection();
            this.memory = ManagementFactory.newPlatformMXBeanProxy(conn, ManagementFactory.MEMORY_MXBEAN_NAME,
                    MemoryMXBean.class);
        } catch (Exception e) {
            // Never leave the child behind when it could not be reached.
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw e;
        }
    }

    private void awaitPort(int p) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("router exited at start: " + Files.readString(log));
            }
            try (Socket s = new Socket("127.0.0.1", p)) {
                return;
            } catch (IOException notYet) {
                Thread.sleep(100);
            }
        }
        throw new IOException("router did not listen on " + p + " within 30 s; log: " + log);
    }

    int port() {
        return port;
    }

    Path log() {
        return log;
    }

    /** Heap now, then after a full GC: the second figure is what the router actually keeps. */
    Heap heap() {
        long used = memory.getHeapMemoryUsage().getUsed();
        memory.gc();
        var after = memory.getHeapMemoryUsage();
        return new Heap(used, after.getUsed(), after.getMax());
    }

    /** {@code scrouter_near_cache_sessions} from the router's /metrics, or -1 if it cannot be read. */
    long nearCacheSessions() {
        try {
            String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
            return metric(body, "scrouter_near_cache_sessions");
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The value of an unlabelled gauge in Prometheus text format, or -1 if absent. */
    static long metric(String body, String name) {
        for (String line : body.split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        return -1;
    }

    @Override
    public void close() throws Exception {
        try {
            jmx.close();
        } catch (IOException ignored) {
            // the child may already be gone
        }
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
