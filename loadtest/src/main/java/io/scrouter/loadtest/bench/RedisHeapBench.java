package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.CommandText;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import java.util.concurrent.Callable;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Heap a Redis-backed router holds per session, where its only per-session state is the near-cache: one router
 * jar (its own process, as users run it) places {@code --sessions} new sessions through the request path, and
 * its live heap is read with {@code jmap -histo:live} (a full collection first) before and after, per class. The
 * near-cache's size comes from the router's own {@code /metrics}. Redis's memory per session is read too.
 *
 * <pre>loadtest/bin/loadtest bench-heap-redis [--sessions 1000000] [--in-flight 64] [--max-seconds 900]</pre>
 */
@Command(name = "bench-heap-redis", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "Heap a Redis-backed router process holds per session: place --sessions "
        + "new sessions through the request path and read its live heap per class before and after "
        + "(jmap -histo:live), and Redis's memory per session. Needs redis-server.")
public final class RedisHeapBench implements Callable<Integer> {

    private static final List<String> JVM = List.of("-Xmx2g");
    private static final int WARM_UP_SESSIONS = 20_000;

    @Option(names = "--sessions", defaultValue = "1000000", paramLabel = "N",
            description = "New sessions to place, 1000 to 10000000 (default: ${DEFAULT-VALUE}).")
    int sessions;

    @Option(names = "--in-flight", defaultValue = "64", paramLabel = "N",
            description = "Requests in flight, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--max-seconds", defaultValue = "900", paramLabel = "N",
            description = "Stop placing after this long, 10 to 7200 (default: ${DEFAULT-VALUE}).")
    int maxSeconds;

    @Option(names = "--out", defaultValue = "loadtest/results/heap-redis.md", paramLabel = "FILE",
            description = "The report (default: ${DEFAULT-VALUE}).")
    Path out;

    @Spec
    CommandSpec spec;

    public RedisHeapBench() {
    }

    /** The options, range-checked. */
    record Settings(int sessions, int inFlight, int maxSeconds, Path out) {
    }

    Settings settings() {
        return new Settings(Bounds.within(spec, "--sessions", sessions, 1_000, 10_000_000),
                Bounds.within(spec, "--in-flight", inFlight, 1, 4096),
                Bounds.within(spec, "--max-seconds", maxSeconds, 10, 7200), out);
    }

    /** Live bytes and instances per class, from {@code jmap -histo:live}. */
    record Histogram(Map<String, long[]> classes, long totalBytes) {
    }

    @Override
    public Integer call() throws Exception {
        Settings o = settings();
        String command = CommandText.of(spec);
        String started = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        Progress progress = new Progress();
        Cores cores = Cores.detect();
        progress.say("%s", cores.describe());
        cores.pinClient();
        // Room for every session: at exactly the default size Caffeine may already evict a few.
        String yaml = String.format(Locale.ROOT, "sessions: {nearCacheMaxSize: %d}%n",
                o.sessions() + o.sessions() / 10 + WARM_UP_SESSIONS);
        Path dir = Files.createTempDirectory("scrouter-heap");
        try (ServerProcesses servers = ServerProcesses.start(dir, cores, List.of(Target.ROUTER_REDIS), 1, JVM, "", yaml,
                progress)) {
            ServerProcesses.Server router = servers.of(Target.ROUTER_REDIS, 1).get(0);
            int metricsPort = router.metricsPort();
            InFlightLoad load = new InFlightLoad(List.of(router.calls()));
            ProcessBench.bind(router, SessionMix.knownSet(WARM_UP_SESSIONS));
            long cachedBefore = nearCacheSize(metricsPort);
            Histogram before = histogram(router.pid());
            long redisBefore = redisUsedMemory(servers.redis().port());
            progress.say("before: %,d sessions in the near-cache, live heap %.1f MiB", cachedBefore,
                    before.totalBytes() / 1048576.0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.maxSeconds());
            long placed = 0;
            long errors = 0;
            while (placed < o.sessions() && System.nanoTime() < deadline) {
                InFlightLoad.Figures f = load.run(SessionMix.NEW.sessions(List.of()), o.inFlight(), 10_000);
                placed += f.answered();
                errors += f.errors();
                progress.say("%,d of %,d sessions placed (%.0f/s, errors %d)", placed, o.sessions(), f.perSecond(), errors);
            }
            Thread.sleep(2_000); // the binding feed's last reads
            long cachedAfter = nearCacheSize(metricsPort);
            Histogram after = histogram(router.pid());
            long redisAfter = redisUsedMemory(servers.redis().port());
            long sessions = cachedAfter - cachedBefore;
            Path gcLog = servers.gcLog(router.name());
            String pauses = GcPauses.summary(GcPauses.young(Files.readString(gcLog))) + " (" + GcPauses.collector(gcLog)
                    + ")";
            String md = report(command, started, cores, o, placed, errors, cachedBefore, cachedAfter, before, after,
                    redisAfter - redisBefore, sessions, pauses);
            Files.createDirectories(o.out().toAbsolutePath().getParent());
            Files.writeString(o.out(), md);
            System.out.println(md);
            progress.say("written to %s", o.out());
        }
        return 0;
    }

    private static String report(String command, String started, Cores cores, Settings o, long placed,
                                 long errors, long cachedBefore, long cachedAfter, Histogram before, Histogram after,
                                 long redisBytes, long sessions, String youngPauses) {
        StringBuilder md = new StringBuilder("# Heap per session of a Redis-backed router\n\n");
        md.append("Command: `").append(command).append("`  \n");
        md.append("Started: ").append(started).append("  \n");
        md.append("Machine: ").append(ProcessBench.machineLine()).append("  \n");
        md.append("Cores: ").append(cores.describe()).append("  \n");
        md.append("Router: the jar, Redis store, ").append(String.join(" ", JVM)).append("; `sessions.nearCacheMaxSize` ")
                .append("raised above the sessions placed so that none is evicted  \n");
        md.append(String.format(Locale.ROOT, "%nSessions placed through the request path (new session on every request, "
                + "%d in flight): %,d, errors %d. Near-cache: %,d before, %,d after (+%,d). Live heap (`jmap -histo:live`, "
                + "after a full collection): %.1f MiB before, %.1f MiB after.%n%n", o.inFlight(), placed, errors,
                cachedBefore, cachedAfter, sessions, before.totalBytes() / 1048576.0, after.totalBytes() / 1048576.0));
        md.append(String.format(Locale.ROOT, "**Heap per session: %.0f bytes** (live heap difference ÷ near-cache "
                + "difference). Redis: %.0f bytes per session (`used_memory` difference: the session key, its entry in "
                + "the replica's index, and the binding feed's share, capped at ~200,000 entries).%n%n",
                (double) (after.totalBytes() - before.totalBytes()) / Math.max(1, sessions),
                (double) redisBytes / Math.max(1, sessions)));
        md.append("The router's young collections over the run (`-Xlog:gc`; the near-cache's arrays grow as it fills, "
                + "and a young collection copies what grew since the last): ").append(youngPauses).append(".\n\n");
        md.append("| class | instances per session | bytes per session |\n|---|---:|---:|\n");
        List<Map.Entry<String, long[]>> rows = new ArrayList<>();
        after.classes().forEach((cls, v) -> {
            long[] b = before.classes().getOrDefault(cls, new long[2]);
            rows.add(Map.entry(cls, new long[] {v[0] - b[0], v[1] - b[1]}));
        });
        rows.sort((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]));
        for (Map.Entry<String, long[]> r : rows.subList(0, Math.min(12, rows.size()))) {
            md.append(String.format(Locale.ROOT, "| `%s` | %.2f | %.1f |%n", r.getKey(),
                    (double) r.getValue()[0] / Math.max(1, sessions), (double) r.getValue()[1] / Math.max(1, sessions)));
        }
        return md.toString();
    }

    /** Parses {@code jmap -histo:live}: {@code num: instances bytes class-name (module)} lines and a Total line. */
    static Histogram parseHistogram(String text) {
        Map<String, long[]> classes = new HashMap<>();
        long total = 0;
        for (String line : text.split("\r?\n")) {
            String t = line.trim();
            if (t.startsWith("Total")) {
                String[] f = t.split("\\s+");
                total = Long.parseLong(f[2]);
            } else if (!t.isEmpty() && Character.isDigit(t.charAt(0)) && t.contains(":")) {
                String[] f = t.split("\\s+");
                if (f.length >= 4) {
                    classes.merge(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])},
                            (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
                }
            }
        }
        return new Histogram(classes, total);
    }

    private static Histogram histogram(long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jmap").toString(),
                "-histo:live", Long.toString(pid)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("jmap -histo:live failed: " + out);
        }
        return parseHistogram(out);
    }

    private static long nearCacheSize(int metricsPort) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        for (String line : body.split("\n")) {
            if (line.startsWith("scrouter_near_cache_sessions ")) {
                return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new IOException("the router's /metrics has no scrouter_near_cache_sessions");
    }

    private static long redisUsedMemory(int port) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "INFO", "memory")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            throw new IOException("redis-cli INFO memory did not finish");
        }
        for (String line : out.split("\r?\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()).trim());
            }
        }
        throw new IOException("no used_memory in INFO memory: " + out);
    }
}
