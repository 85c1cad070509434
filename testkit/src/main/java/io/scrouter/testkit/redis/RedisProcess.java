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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code redis-server} process on a free loopback port, for integration tests.
 *
 * <p>No Docker engine is assumed: the binary comes from the machine ({@code .ci/run} installs the Debian
 * package when it is missing). Persistence is off and the data directory is a temp folder, so each test
 * class starts from an empty Redis. Faults are injected on the real process: {@link #pause()} sends
 * SIGSTOP (Redis hangs, connections stay open), {@link #kill()} ends it. A server started with
 * {@link #startProtected} requires a password; {@link #command} authenticates with it.
 */
public final class RedisProcess implements AutoCloseable {

    private final int port;
    private final Path dir;
    private final List<String> extraArgs;
    private final String password;
    private Process process;

    private RedisProcess(int port, Path dir, List<String> extraArgs, String password) {
        this.port = port;
        this.dir = dir;
        this.extraArgs = extraArgs;
        this.password = password;
    }

    public static RedisProcess start(String... extraArgs) throws IOException {
        return start(null, List.of(extraArgs));
    }

    /** A server that refuses every command until a client authenticates with {@code password}. */
    public static RedisProcess startProtected(String password, String... extraArgs) throws IOException {
        List<String> args = new ArrayList<>(List.of("--requirepass", password));
        args.addAll(List.of(extraArgs));
        return start(password, args);
    }

    private static RedisProcess start(String password, List<String> extraArgs) throws IOException {
        RedisProcess r = new RedisProcess(freePort(), Files.createTempDirectory("redis-test"), List.copyOf(extraArgs),
                password);
        try {
            r.launch();
        } catch (IOException | RuntimeException e) {
            r.stopQuietly();
            throw e;
        }
        return r;
    }

    /** Whether a {@code redis-server} binary is installed, so tests can skip (never pass) without one. */
    public static boolean installed() {
        try {
            binary();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Starts a server on a given loopback port: for a test whose subject was configured with that address before
     * Redis existed (a router started while its Redis is down).
     */
    public static RedisProcess startOn(int port, String... extraArgs) throws IOException {
        RedisProcess r = new RedisProcess(port, Files.createTempDirectory("redis-test"), List.of(extraArgs), null);
        try {
            r.launch();
        } catch (IOException | RuntimeException e) {
            r.stopQuietly();
            throw e;
        }
        return r;
    }

    /** Starts the server again on the same port (after {@link #kill()}). */
    public void restart() throws IOException {
        launch();
    }

    private void launch() throws IOException {
        String binary = binary();
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
                if ("PONG".equals(Resp.authenticated(port, password, "PING"))) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            }
            sleep(20);
        }
        throw new IOException("redis-server did not answer PING on port " + port + " within 10 s; log in " + dir);
    }

    /** The {@code redis-server} binary (also started with {@code --sentinel} for Sentinel). */
    public static String binary() throws IOException {
        for (String candidate : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        throw new NotInstalled();
    }

    /**
     * No {@code redis-server} binary on this machine. A fact about the machine, not a failure of what was running:
     * commands report it as one line and tests skip on {@link #installed()}.
     */
    public static final class NotInstalled extends IOException {
        public NotInstalled() {
            super("redis-server is not installed (looked in /usr/bin and /usr/local/bin): run `bash .ci/run`, which "
                    + "installs the Debian package, or `apt-get install -y redis-server`");
        }
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

    /** The password it requires, or null. */
    public String password() {
        return password;
    }

    /** Its data directory, which also holds its log ({@code redis.log}). */
    public Path dir() {
        return dir;
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Sends one command and returns the whole parsed reply (see {@link Resp}), authenticating if needed. */
    public Object reply(String... words) throws IOException {
        return Resp.authenticated(port, password, words);
    }

    /**
     * {@code INFO commandstats} as command name → calls since start (or the last {@code CONFIG RESETSTAT}). Redis
     * counts the commands a script runs under their own names as well as the script call itself.
     */
    public Map<String, Long> commandCalls() throws IOException {
        Map<String, Long> calls = new HashMap<>();
        String info = String.valueOf(reply("INFO", "commandstats"));
        Matcher m = Pattern.compile("cmdstat_([a-z|]+):calls=(\\d+)").matcher(info);
        while (m.find()) {
            calls.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return calls;
    }

    /** Sends one inline command over RESP and returns the first reply line (for test setup and checks). */
    public String command(String... words) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            if (password != null) {
                out.write(Resp.encode("AUTH", password));
                out.flush();
                Resp.read(in);
            }
            StringBuilder sb = new StringBuilder("*").append(words.length).append("\r\n");
            for (String w : words) {
                byte[] b = w.getBytes(StandardCharsets.UTF_8);
                sb.append('$').append(b.length).append("\r\n").append(w).append("\r\n");
            }
            out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
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

    /**
     * Hangs Redis: SIGSTOP, then waits until the kernel reports the process stopped. {@code kill} returning means
     * the signal was sent, not that Redis stopped; a command that reaches Redis in between is still answered. A
     * test that dates the hang from this method's return knows nothing after it is answered until
     * {@link #resume()}.
     */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
        awaitState('T', "stop after SIGSTOP");
    }

    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    /** Longest wait for the kernel to apply a signal: far beyond the microseconds it takes. */
    private static final long SIGNAL_TAKES_EFFECT_WITHIN_NANOS = TimeUnit.SECONDS.toNanos(10);

    /**
     * Waits until the process state in {@code /proc/<pid>/stat} (the field after the command name) is
     * {@code state}. Where there is no {@code /proc} (not Linux), returns at once.
     */
    private void awaitState(char state, String what) throws IOException, InterruptedException {
        Path stat = Path.of("/proc", Long.toString(process.pid()), "stat");
        if (!Files.exists(stat)) {
            return;
        }
        long deadline = System.nanoTime() + SIGNAL_TAKES_EFFECT_WITHIN_NANOS;
        while (true) {
            String line = Files.readString(stat);
            char current = line.charAt(line.lastIndexOf(')') + 2);
            if (current == state) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server (pid " + process.pid() + ") did not " + what
                        + " within " + TimeUnit.NANOSECONDS.toSeconds(SIGNAL_TAKES_EFFECT_WITHIN_NANOS)
                        + " s; its state is '" + current + "'");
            }
            Thread.sleep(0, 100_000);
        }
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

    private void stopQuietly() {
        try {
            close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
