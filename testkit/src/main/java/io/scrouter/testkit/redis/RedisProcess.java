package io.scrouter.testkit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} process on a free loopback port, for integration tests.
 *
 * <p>No Docker engine is assumed: the binary comes from the machine ({@code .ci/run} installs the Debian
 * package when it is missing). Persistence is off and the data directory is a temp folder, so each test
 * class starts from an empty Redis. Faults are injected on the real process: {@link #pause()} sends
 * SIGSTOP (Redis hangs, connections stay open), {@link #kill()} ends it.
 */
public final class RedisProcess implements AutoCloseable {

    private final int port;
    private final Path dir;
    private final List<String> extraArgs;
    private Process process;

    private RedisProcess(int port, Path dir, List<String> extraArgs) {
        this.port = port;
        this.dir = dir;
        this.extraArgs = extraArgs;
    }

    public static RedisProcess start(String... extraArgs) throws IOException {
        RedisProcess r = new RedisProcess(freePort(), Files.createTempDirectory("redis-test"), List.of(extraArgs));
        r.launch();
        return r;
    }

    /** Starts the server again on the same port (after {@link #kill()}). */
    public void restart() throws IOException {
        launch();
    }

    private void launch() throws IOException {
        String binary = findBinary();
        List<String> cmd = new ArrayList<>(List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--protected-mode", "no"));
        cmd.addAll(extraArgs);
        process = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("redis-server exited at start: " + Files.readString(dir.resolve("redis.log")));
            }
            try {
                if ("+PONG".equals(command("PING"))) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            }
            sleep(20);
        }
        throw new IOException("redis-server did not answer PING on port " + port + " within 10 s");
    }

    private static String findBinary() throws IOException {
        for (String candidate : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        throw new IOException("redis-server not found. These tests need a real Redis: run `bash .ci/run` (it "
                + "installs the Debian package) or `apt-get install -y redis-server`");
    }

    public int port() {
        return port;
    }

    /** The running server's process id (for pinning it to a core); -1 when it is not running. */
    public long pid() {
        return process != null && process.isAlive() ? process.pid() : -1;
    }

    public String address() {
        return "redis://127.0.0.1:" + port;
    }

    /** Sends one inline command over RESP and returns the first reply line (for test setup and checks). */
    public String command(String... words) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            StringBuilder sb = new StringBuilder("*").append(words.length).append("\r\n");
            for (String w : words) {
                byte[] b = w.getBytes(StandardCharsets.UTF_8);
                sb.append('$').append(b.length).append("\r\n").append(w).append("\r\n");
            }
            out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != -1 && c != '\n') {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            String first = line.toString();
            if (first.startsWith("$") && !first.equals("$-1")) {
                line.setLength(0);
                while ((c = in.read()) != -1 && c != '\n') {
                    if (c != '\r') {
                        line.append((char) c);
                    }
                }
                return line.toString();
            }
            return first;
        }
    }

    public void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(String sig) throws IOException, InterruptedException {
        if (process == null || !process.isAlive()) {
            return;
        }
        new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid()))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                .start().waitFor();
    }

    public void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) {
            try {
                resume();
            } catch (IOException ignored) {
                // already gone
            }
            kill();
        }
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
