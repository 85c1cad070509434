package io.scrouter.testkit.router;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The router as users run it: {@code java -jar extproc-…-all.jar --config FILE} in its own process, so a test
 * can send it a real SIGTERM or SIGKILL. Ready when its ext_proc health service reports SERVING, which is what
 * Envoy's health check and Kubernetes readiness wait for.
 */
public final class RouterProcess implements AutoCloseable {

    /** The gRPC health service name the router reports its readiness under. */
    public static final String HEALTH_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

    /** The admin view's address in the router's start line ({@code RouterServer.start}): {@code admin=host:port}. */
    private static final Pattern ADMIN_IN_START_LINE =
            Pattern.compile("ext_proc router listening on .*admin=\\S+?:(\\d+)[,)]");

    private final Process process;
    private final int port;
    private final Path log;

    private RouterProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Starts a router listening on {@code 127.0.0.1:port} with the rest of its configuration in
     * {@code yamlWithoutServer} plus {@code serverExtra} inside the {@code server} section (e.g.
     * {@code "drainPeriod: 3s"}), writing its log to {@code dir}.
     */
    public static RouterProcess start(Path dir, int port, String serverExtra, String yamlWithoutServer,
                                      List<String> jvmArgs) throws IOException {
        Files.createDirectories(dir);
        Path config = dir.resolve("router-" + port + ".yaml");
        Files.writeString(config, "server: {bindAddress: 127.0.0.1, port: " + port
                + (serverExtra.isBlank() ? "" : ", " + serverExtra) + "}\n" + yamlWithoutServer);
        Path log = dir.resolve("router-" + port + "-" + System.nanoTime() + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-jar", jar().toString(), "--config", config.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new RouterProcess(p, port, log);
    }

    /**
     * The router's runnable jar, built by {@code mvn package} of extproc (the reactor builds it before any
     * module that runs this).
     */
    public static Path jar() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("extproc"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IOException("not inside the repository: no extproc/ folder above " + Path.of("").toAbsolutePath());
        }
        try (Stream<Path> files = Files.list(dir.resolve("extproc/target"))) {
            return files.filter(p -> p.getFileName().toString().matches("extproc-.*-all\\.jar")).findFirst()
                    .orElseThrow(() -> new IOException("no extproc/target/extproc-*-all.jar: build it first with "
                            + "mvn -s .mvn/settings.xml -pl extproc -am package -DskipTests"));
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("no extproc/target: build the router first with "
                    + "mvn -s .mvn/settings.xml -pl extproc -am package -DskipTests", e);
        }
    }

    /** Waits, bounded, until the router reports SERVING; false if it did not (or exited). */
    public boolean awaitServing(Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            while (System.nanoTime() < deadline && process.isAlive()) {
                try {
                    HealthCheckResponse r = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.newBuilder().setService(HEALTH_SERVICE).build());
                    if (r.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                        return true;
                    }
                } catch (RuntimeException notYet) {
                    channel.resetConnectBackoff();
                }
                Thread.sleep(50);
            }
            return false;
        } finally {
            channel.shutdownNow();
        }
    }

    public int port() {
        return port;
    }

    /**
     * The port the admin view listens on, as the router reported it in its start line, which it writes before it
     * reports SERVING: call after {@link #awaitServing}. With {@code admin.port: 0} the router picks a free port
     * itself, so a test that restarts a router never races another process for a port it picked and let go.
     */
    public int adminPort() throws IOException {
        Matcher m = ADMIN_IN_START_LINE.matcher(Files.readString(log));
        if (!m.find()) {
            throw new IOException("no admin=host:port in the router's start line (is admin.port set, and did the "
                    + "router report SERVING?); its log: " + log);
        }
        return Integer.parseInt(m.group(1));
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The operating system's process id (for pinning to a core, attaching a profiler, reading /proc). */
    public long pid() {
        return process.pid();
    }

    /** SIGTERM, as Kubernetes sends at the end of a pod's preStop: the router drains, then exits. */
    public void terminate() {
        process.destroy();
    }

    /** Waits, bounded, for the process to exit; returns its exit code, or -1 if it is still running. */
    public int awaitExit(Duration within) throws InterruptedException {
        return process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    }

    /** SIGKILL: a pod lost without warning. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
