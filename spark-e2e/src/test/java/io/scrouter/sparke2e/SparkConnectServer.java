package io.scrouter.sparke2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A real Spark Connect server ({@code SparkConnectServer}, local mode) in a child JVM on loopback ports.
 *
 * <p>Its classpath is the file the {@code spark-e2e/spark-server} module writes, so Spark's ~200 jars never
 * share a classpath with the tests. The JVM flags are the ones Spark's own launcher uses on Java 17
 * ({@code JavaModuleOptions}, read from the spark-launcher jar so they always match the Spark version).
 * Every started process is also ended by a JVM shutdown hook, so a crashed or interrupted test run leaves no
 * Spark behind.
 */
final class SparkConnectServer implements AutoCloseable {

    static final String READY_LINE = "Spark Connect server started at";

    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "spark-connect-server-reaper"));
    }

    private final String name;
    private final int grpcPort;
    private final int uiPort;
    private final Path dir;
    private final Process process;

    private SparkConnectServer(String name, int grpcPort, int uiPort, Path dir, Process process) {
        this.name = name;
        this.grpcPort = grpcPort;
        this.uiPort = uiPort;
        this.dir = dir;
        this.process = process;
    }

    /** Starts the server; call {@link #awaitReady} before using it (two can start side by side). */
    static SparkConnectServer start(String name, Path workRoot) throws IOException {
        List<String> classpath = serverClasspath();
        int grpcPort = freePort();
        int uiPort = freePort();
        Path dir = Files.createDirectories(workRoot.resolve("spark-" + name));
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx1g");
        cmd.addAll(javaModuleOptions(classpath));
        cmd.add("-Djava.io.tmpdir=" + tmp);
        cmd.add("-Dspark.master=local[2]");
        cmd.add("-Dspark.app.name=spark-e2e-" + name);
        cmd.add("-Dspark.driver.host=127.0.0.1");
        cmd.add("-Dspark.driver.bindAddress=127.0.0.1");
        cmd.add("-Dspark.connect.grpc.binding.address=127.0.0.1");
        cmd.add("-Dspark.connect.grpc.binding.port=" + grpcPort);
        cmd.add("-Dspark.ui.port=" + uiPort);
        // Exact live task counts in the REST API; the default 100 ms period lags behind the scheduler.
        cmd.add("-Dspark.ui.liveUpdate.period=0");
        cmd.add("-Dspark.ui.showConsoleProgress=false");
        cmd.add("-Dspark.sql.shuffle.partitions=2");
        // The server ends a result stream after this long and the client reattaches (ReattachExecute): short, so
        // that any query of a few seconds sends one through the router.
        cmd.add("-Dspark.connect.execute.reattachable.senderMaxStreamDuration=2s");
        cmd.add("-Dspark.local.dir=" + tmp);
        cmd.add("-Dspark.sql.warehouse.dir=" + dir.resolve("warehouse").toUri());
        cmd.add("-cp");
        cmd.add(String.join(java.io.File.pathSeparator, classpath));
        cmd.add("org.apache.spark.sql.connect.service.SparkConnectServer");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("server.log").toFile());
        // Spark binds the UI and block manager to this address: keep everything on loopback.
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        Process process = pb.start();
        RUNNING.add(process);
        return new SparkConnectServer(name, grpcPort, uiPort, dir, process);
    }

    /** Waits, bounded, for the server's "started" log line; fails at once if the JVM exits. */
    SparkConnectServer awaitReady(long timeoutSeconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (log().contains(READY_LINE)) {
                return this;
            }
            if (!process.isAlive()) {
                throw new IOException("Spark Connect server " + name + " exited with " + process.exitValue()
                        + " before it was ready; log tail:\n" + logTail());
            }
            Thread.sleep(100);
        }
        throw new IOException("Spark Connect server " + name + " not ready within " + timeoutSeconds + " s; log tail:\n"
                + logTail());
    }

    String name() {
        return name;
    }

    /** The gRPC address, as the pool and the route header carry it. */
    String grpcAddress() {
        return "127.0.0.1:" + grpcPort;
    }

    int grpcPort() {
        return grpcPort;
    }

    /** Base URL of the driver UI, whose {@code /api/v1} the router's probe reads. */
    String metricsUrl() {
        return "http://127.0.0.1:" + uiPort;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String log() throws IOException {
        Path log = dir.resolve("server.log");
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
    }

    private String logTail() throws IOException {
        String log = log();
        return log.substring(Math.max(0, log.length() - 4000));
    }

    /** Ends the driver at once, as a crashed replica would (SIGKILL). */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(20, TimeUnit.SECONDS);
        RUNNING.remove(process);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        RUNNING.remove(process);
    }

    static List<String> serverClasspath() throws IOException {
        String file = System.getProperty("spark.server.classpath.file");
        if (file == null) {
            throw new IllegalStateException("system property spark.server.classpath.file is not set; run the tests "
                    + "through Maven (mvn -s .mvn/settings.xml -pl spark-e2e -am verify)");
        }
        Path path = Path.of(file);
        if (!Files.exists(path)) {
            throw new IllegalStateException(path + " does not exist: the spark-e2e/spark-server module writes it "
                    + "(build with -am so it runs first)");
        }
        return Arrays.stream(Files.readString(path).trim().split(java.io.File.pathSeparator))
                .filter(s -> !s.isBlank()).toList();
    }

    /** Spark's own list of JVM flags for Java 17+, from the spark-launcher jar of the server classpath. */
    static List<String> javaModuleOptions(List<String> classpath) {
        String launcher = classpath.stream().filter(p -> Path.of(p).getFileName().toString()
                .startsWith("spark-launcher_")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no spark-launcher jar on the server classpath"));
        try (URLClassLoader loader = new URLClassLoader(new URL[] {Path.of(launcher).toUri().toURL()}, null)) {
            Class<?> options = loader.loadClass("org.apache.spark.launcher.JavaModuleOptions");
            Method array = options.getMethod("defaultModuleOptionArray");
            return List.of((String[]) array.invoke(null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read JavaModuleOptions from " + launcher, e);
        }
    }

    /** A file of the repository (this module runs in {@code spark-e2e/}). */
    static Path repoFile(String relative) {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("envoy"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("not inside the repository: no envoy/ folder above the working directory");
        }
        return dir.resolve(relative);
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
