package io.scrouter.extproc.deploy;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The ext_proc service run as its own JVM, the way operators run it ({@code Main --config <file>}), from
 * the test class path so it needs no packaged jar.
 */
final class ExtProcProcess implements AutoCloseable {

    private static final String MAIN = "io.scrouter.extproc.Main";

    private final Process process;
    private final Path log;

    private ExtProcProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    static ExtProcProcess start(Path config, int port, Path log) throws IOException, InterruptedException {
        return start(config, port, log, Map.of());
    }

    /** As {@link #start(Path, int, Path)}, with {@code env} (for example the log format) set for the process. */
    static ExtProcProcess start(Path config, int port, Path log, Map<String, String> env)
            throws IOException, InterruptedException {
        return start(config, port, log, env, List.of());
    }

    /** As above, with {@code jvmArgs} given to the JVM (for example {@code -XX:ActiveProcessorCount=1}). */
    static ExtProcProcess start(Path config, int port, Path log, Map<String, String> env,
                                List<String> jvmArgs) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Surefire may put only a manifest jar on java.class.path; this property has the real one.
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmArgs);
        command.addAll(List.of("-cp", classPath, MAIN, "--config", config.toString()));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        // The environment overrides the file; a stray SCROUTER_* from the build machine must not.
        builder.environment().keySet().removeIf(name -> name.startsWith("SCROUTER_"));
        builder.environment().putAll(env);
        ExtProcProcess started = new ExtProcProcess(builder.start(), log);
        started.awaitServing(port, Duration.ofSeconds(60));
        return started;
    }

    private void awaitServing(int port, Duration patience) throws InterruptedException, IOException {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            Instant deadline = Instant.now().plus(patience);
            HealthCheckRequest request = HealthCheckRequest.newBuilder().setService(RouteHeaders.HEALTH_SERVICE).build();
            while (Instant.now().isBefore(deadline)) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("ext_proc exited with " + process.exitValue() + ":\n" + output());
                }
                try {
                    HealthCheckResponse response = HealthGrpc.newBlockingStub(channel)
                            .withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(request);
                    if (response.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                        return;
                    }
                } catch (StatusRuntimeException notYet) {
                    // Still starting.
                }
                Thread.sleep(200);
            }
            throw new IllegalStateException("ext_proc not SERVING within " + patience + ":\n" + output());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    String output() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "(no output)";
    }

    @Override
    public void close() {
        Processes.stop(process);
    }
}
