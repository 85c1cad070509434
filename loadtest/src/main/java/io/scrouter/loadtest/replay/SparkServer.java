package io.scrouter.loadtest.replay;

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
 * A real Spark Connect server (local mode, {@code slots} task threads) in a child JVM on loopback ports, for
 * the real-Spark check. Same recipe as spark-e2e's test fixture: the classpath file written by the
 * {@code spark-e2e/spark-server} module, and the JVM flags Spark's own launcher uses on Java 17
 * ({@code JavaModuleOptions}). Every process started is also ended by a shutdown hook.
 */
final class SparkServer implements AutoCloseable {

    static final String READY_LINE = "Spark Connect server started at";
    static final String DEFAULT_CLASSPATH_FILE = "spark-e2e/spark-server/target/spark-server.classpath";

    private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(Process::destroyForcibly),
                "spark-server-reaper"));
    }

    private final String name;
    private final int grpcPort;
    private final int uiPort;
    private final Path log;
    private final Process process;

    private SparkServer(String name, int grpcPort, int uiPort, Path log, Process process) {
        this.name = name;
        this.grpcPort = grpcPort;
        this.uiPort = uiPort;
        this.log = log;
        this.process = process;
    }

    /** Starts the server; {@link #awaitReady} before use (several can start side by side). */
    static SparkServer start(String name, int slots, Path classpathFile, Path workRoot) throws IOException {
        List<String> classpath = classpath(classpathFile);
        int grpcPort = freePort();
        int uiPort = freePort();
        Path dir = Files.createDirectories(workRoot.resolve(name));
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx1g");
        cmd.addAll(javaModuleOptions(classpath));
        cmd.add("-Djava.io.tmpdir=" + tmp);
        cmd.add("-Dspark.master=local[" + slots + "]");
        cmd.add("-Dspark.app.name=scrouter-spark-check-" + name);
        cmd.add("-Dspark.driver.host=127.0.0.1");
        cmd.add("-Dspark.driver.bindAddress=127.0.0.1");
        cmd.add("-Dspark.connect.grpc.binding.address=127.0.0.1");
        cmd.add("-Dspark.connect.grpc.binding.port=" + grpcPort);
        cmd.add("-Dspark.ui.port=" + uiPort);
        cmd.add("-Dspark.ui.showConsoleProgress=false");
        cmd.add("-Dspark.sql.shuffle.partitions=2");
        cmd.add("-Dspark.local.dir=" + tmp);
        cmd.add("-Dspark.sql.warehouse.dir=" + dir.resolve("warehouse").toUri());
        cmd.add("-cp");
        cmd.add(String.join(java.io.File.pathSeparator, classpath));
        cmd.add("org.apache.spark.sql.connect.service.SparkConnectServer");
        Path log = dir.resolve("server.log");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        Process process = pb.start();
        RUNNING.add(process);
        return new SparkServer(name, grpcPort, uiPort, log, process);
    }

    /** Waits, bounded, for the server's "started" log line; fails at once if the JVM exits. */
    void awaitReady(long timeoutSeconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log, StandardCharsets.UTF_8).contains(READY_LINE)) {
                return;
            }
            if (!process.isAlive()) {
                throw new IOException("Spark Connect server " + name + " exited before it was ready; see " + log);
            }
            Thread.sleep(200);
        }
        throw new IOException("Spark Connect server " + name + " not ready within " + timeoutSeconds + " s; see " + log);
    }

    String name() {
        return name;
    }

    String grpcAddress() {
        return "127.0.0.1:" + grpcPort;
    }

    String metricsUrl() {
        return "http://127.0.0.1:" + uiPort;
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

    static List<String> classpath(Path file) throws IOException {
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(file + " does not exist: build it with mvn -s .mvn/settings.xml -f "
                    + "spark-e2e/spark-server/pom.xml generate-resources (loadtest/bin/loadtest does this for you)");
        }
        return Arrays.stream(Files.readString(file).trim().split(java.io.File.pathSeparator))
                .filter(s -> !s.isBlank()).toList();
    }

    private static List<String> javaModuleOptions(List<String> classpath) {
        String launcher = classpath.stream().filter(p -> Path.of(p).getFileName().toString()
                .startsWith("spark-launcher_")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no spark-launcher jar on the Spark server classpath"));
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

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
