package io.scrouter.extproc.deploy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/** A real Envoy: the {@code envoy} binary on PATH if there is one, else the official image through Docker. */
final class RunningEnvoy implements AutoCloseable {

    /** Same minor version as the protos the config tests parse against. */
    static final String IMAGE = "envoyproxy/envoy:v1.34-latest";

    private final Process process;
    private final GenericContainer<?> container;
    private final Path log;

    private RunningEnvoy(Process process, GenericContainer<?> container, Path log) {
        this.process = process;
        this.container = container;
        this.log = log;
    }

    static boolean binaryOnPath() {
        try {
            Process version = new ProcessBuilder("envoy", "--version").redirectErrorStream(true).start();
            version.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            return version.waitFor(30, TimeUnit.SECONDS) && version.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable noDocker) {
            return false;
        }
    }

    static RunningEnvoy start(Path config, int adminPort, Path log) throws IOException, InterruptedException {
        RunningEnvoy envoy;
        if (binaryOnPath()) {
            // No hot restart: its shared memory would clash with any other Envoy on the machine.
            Process process = new ProcessBuilder("envoy", "-c", config.toString(), "--log-level", "info",
                    "--disable-hot-restart")
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            envoy = new RunningEnvoy(process, null, log);
        } else {
            // Host networking: Envoy must reach the replicas and ext_proc on the host's loopback by the
            // literal ip:port the service writes.
            GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE))
                    .withNetworkMode("host")
                    .withCopyFileToContainer(MountableFile.forHostPath(config, 0644), "/etc/envoy/envoy.yaml")
                    .withCommand("envoy", "-c", "/etc/envoy/envoy.yaml", "--log-level", "info")
                    .waitingFor(Wait.forLogMessage(".*starting main dispatch loop.*\\s", 1)
                            .withStartupTimeout(Duration.ofSeconds(120)));
            container.start();
            envoy = new RunningEnvoy(null, container, log);
        }
        envoy.awaitReady(adminPort, Duration.ofSeconds(60));
        return envoy;
    }

    private void awaitReady(int adminPort, Duration patience) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/ready"))
                .timeout(Duration.ofSeconds(2)).build();
        Instant deadline = Instant.now().plus(patience);
        while (Instant.now().isBefore(deadline)) {
            if (process != null && !process.isAlive()) {
                throw new IllegalStateException("envoy exited with " + process.exitValue() + ":\n" + output());
            }
            try {
                HttpResponse<String> response = http.send(ready, HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // Admin not listening yet.
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("envoy not ready within " + patience + ":\n" + output());
    }

    String output() throws IOException {
        if (container != null) {
            return container.getLogs();
        }
        return Files.exists(log) ? Files.readString(log) : "(no output)";
    }

    @Override
    public void close() {
        if (container != null) {
            container.stop();
        }
        if (process != null) {
            Processes.stop(process);
        }
    }
}
