package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.CommandText;
import io.scrouter.loadtest.profile.FlameGraph;
import io.scrouter.loadtest.profile.JfrDigest;
import io.scrouter.loadtest.profile.ThreadTimes;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Where a Redis-backed router process spends its time: one router jar and {@code redis-server} pinned to the server
 * core, the client on the other, as in {@code bench}. After a warm-up of each (as {@code bench}'s: at least
 * {@value #WARMUP_SECONDS} s, then on until the routers' JIT has settled), each load (known sessions, new sessions at
 * two levels of requests in flight) runs once under a JFR recording started with {@code jcmd} (the router itself
 * is started as users start it), with the router's per-thread CPU and context switches and Redis's command counts
 * read before and after. Writes, into {@code --out}: {@code profile.md} (the figures) and one flame graph per load
 * ({@code <load>.svg}); the recordings and their folded stacks stay in a temporary folder it names.
 *
 * With {@code --routers 2}, two router jars share the server core with Redis, as in {@code bench}'s two-router blocks;
 * the load is spread over both, each is recorded, and each one's figures are given per request of the whole load.
 *
 * <pre>loadtest/bin/loadtest bench-profile [--seconds 30] [--known 2000] [--in-flight 32] [--new-in-flight 4] [--routers 1]</pre>
 */
@Command(name = "bench-profile", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "Where a Redis-backed router process spends its time: each load under a "
        + "JFR recording, with per-thread CPU and wake-ups and Redis's command counts; writes profile.md and one "
        + "flame graph per load into --out. Needs redis-server.")
public final class ProfileBench implements Callable<Integer> {

    /**
     * A load's warm-up: at least this long, then on, {@link #WARMUP_PART_SECONDS} at a time, while the routers' JIT
     * used more than {@link ProcessBench#SETTLED_JIT_SHARE} of their CPU, up to {@link #WARMUP_MAX_SECONDS}. The
     * profile is of the steady state: two routers on one core took over a minute to get there (loadtest/README.md,
     * "Two routers' warm-up").
     */
    static final int WARMUP_SECONDS = 10;
    static final int WARMUP_PART_SECONDS = 5;
    static final int WARMUP_MAX_SECONDS = 120;

    /** Methods whose inclusive share of the samples is reported (simple class name and method). */
    static final List<String> MARKERS = List.of(
            "ExtProcService.process", "ProcessStream.onNext", "SessionRouter.decide", "SessionRouter.lookUp",
            "SessionRouter.afterRoute", "BoundedLocalCache.getIfPresent", "RedisSessionStore.findOrBind",
            "RedisSessionStore.announce", "RedisSessionStore.touch", "ObservedSessionStore.timed",
            "ProcessStream.answer", "RouterMetrics.decided", "CompletableFuture.orTimeout",
            "RedisExecutor.execute", "CommandDecoder.decode", "CommandEncoder.encode",
            "RedisPubSubConnection.onMessage", "SessionRouter.learnPeerBinding", "RedisSessionStore.deliver",
            "SessionRouter.reconcile", "SessionCounts.refresh", "PoolRefresher.refresh", "LoadProber.probeAll",
            "WriteQueue.flush", "WriteQueue.scheduleFlush");

    @Option(names = "--seconds", defaultValue = "30", paramLabel = "N",
            description = "Length of each profiled load, 1 to 600 (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--known", defaultValue = "2000", paramLabel = "N",
            description = "Sessions bound before the loads, 1 to 1000000 (default: ${DEFAULT-VALUE}).")
    int known;

    @Option(names = "--in-flight", defaultValue = "32", paramLabel = "N",
            description = "Requests in flight, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--new-in-flight", defaultValue = "4", paramLabel = "N",
            description = "Requests in flight of the lighter new-session load, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    int newInFlight;

    @Option(names = "--routers", defaultValue = "1", paramLabel = "N",
            description = "Router processes sharing the load, each recorded, 1 or 2 (default: ${DEFAULT-VALUE}).")
    int routers;

    @Option(names = "--out", defaultValue = "loadtest/results/profile", paramLabel = "DIR",
            description = "Where profile.md and the flame graphs go (default: ${DEFAULT-VALUE}).")
    Path out;

    @Spec
    CommandSpec spec;

    public ProfileBench() {
    }

    /** The options, range-checked. */
    record Settings(int seconds, int known, int inFlight, int newInFlight, int routers, Path out) {
    }

    Settings settings() {
        return new Settings(Bounds.within(spec, "--seconds", seconds, 1, 600),
                Bounds.within(spec, "--known", known, 1, 1_000_000), Bounds.within(spec, "--in-flight", inFlight, 1, 4096),
                Bounds.within(spec, "--new-in-flight", newInFlight, 1, 4096),
                Bounds.within(spec, "--routers", routers, 1, 2), out);
    }

    /** One profiled load. */
    private record Phase(String key, String title, SessionMix mix, int inFlight) {
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
        MachineLoad machine = new MachineLoad();
        machine.sample();
        Files.createDirectories(o.out());
        Path dir = Files.createTempDirectory("scrouter-profile");
        List<Phase> phases = List.of(
                new Phase("known", "known sessions, " + o.inFlight() + " in flight", SessionMix.KNOWN, o.inFlight()),
                new Phase("new-" + o.newInFlight(), "new sessions, " + o.newInFlight() + " in flight", SessionMix.NEW,
                        o.newInFlight()),
                new Phase("new-" + o.inFlight(), "new sessions, " + o.inFlight() + " in flight", SessionMix.NEW,
                        o.inFlight()));
        StringBuilder md = new StringBuilder();
        try (ServerProcesses servers = ServerProcesses.start(dir, cores, List.of(Target.ROUTER_REDIS), o.routers(),
                ProcessBench.SERVER_JVM, progress)) {
            List<ServerProcesses.Server> routers = servers.of(Target.ROUTER_REDIS, o.routers());
            int redisPort = servers.redis().port();
            List<String> known = SessionMix.knownSet(o.known());
            for (ServerProcesses.Server router : routers) {
                ProcessBench.bind(router, known);
            }
            InFlightLoad load = new InFlightLoad(servers.calls(Target.ROUTER_REDIS, o.routers()));
            Path settings = samplingSettings(dir);
            List<Long> pids = servers.pids(Target.ROUTER_REDIS, o.routers());
            StringBuilder warmups = new StringBuilder();
            for (Phase p : phases) {
                progress.say("warm-up: %s, %d s or until the JIT settles, at most %d s", p.title(), WARMUP_SECONDS,
                        WARMUP_MAX_SECONDS);
                ProcessBench.Warmup w = ProcessBench.warmUp(load, pids, p.mix().sessions(known), p.inFlight(),
                        WARMUP_SECONDS, WARMUP_PART_SECONDS, WARMUP_MAX_SECONDS);
                warmups.append(warmups.isEmpty() ? "" : ", ").append(p.key()).append(' ').append(w.describe());
                progress.say("warm-up: %s, %s", p.title(), w.describe());
            }
            // Background work: what the routers and Redis do with no request at all.
            progress.say("idle, 10 s");
            List<ThreadTimes> idleBefore = new ArrayList<>();
            for (ServerProcesses.Server router : routers) {
                idleBefore.add(ThreadTimes.read(router.pid()));
            }
            RedisCommandStats idleRedisBefore = RedisCommandStats.read(redisPort);
            Thread.sleep(10_000);
            List<Map<String, ThreadTimes.Group>> idle = new ArrayList<>();
            for (int r = 0; r < routers.size(); r++) {
                idle.add(ThreadTimes.read(routers.get(r).pid()).since(idleBefore.get(r)));
            }
            RedisCommandStats idleRedis = RedisCommandStats.read(redisPort).since(idleRedisBefore);

            md.append("# Where a Redis-backed router spends its time\n\n");
            md.append("Command: `").append(command).append("`  \n");
            md.append("Started: ").append(started).append("  \n");
            md.append("Machine: ").append(ProcessBench.machineLine()).append("  \n");
            md.append("Cores: ").append(cores.describe()).append("  \n");
            md.append("Router: ").append(routers.size() == 1 ? "the jar" : routers.size() + " jars, the load spread "
                            + "over them as in `bench`, each recorded; each one's figures are per request of the "
                            + "whole load,").append(" Redis store, ").append(String.join(" ", ProcessBench.SERVER_JVM))
                    .append(", JFR (the JDK's `profile` settings with Java stacks sampled every ")
                    .append(SAMPLE_PERIOD).append(") started and stopped with `jcmd` around each load  \n");
            md.append("Warm-up of each load, before any recording (at least ").append(WARMUP_SECONDS)
                    .append(" s, then until the routers' JIT used at most ")
                    .append(Math.round(100 * ProcessBench.SETTLED_JIT_SHARE)).append("% of their CPU over ")
                    .append(WARMUP_PART_SECONDS).append(" s, at most ").append(WARMUP_MAX_SECONDS).append(" s): ")
                    .append(warmups).append("  \n");
            md.append("Collector chosen by the router's JVM: ")
                    .append(GcPauses.collector(servers.gcLog(routers.get(0).name())))
                    .append(" (a JVM started on one core sees one CPU)  \n");
            md.append("Load average: ").append("%LOAD%").append("\n\n");
            md.append(String.format(Locale.ROOT, "## Idle (10 s, no requests)%n%nRedis: %.1f commands/s %s.%n%n",
                    idleRedis.totalCalls() / 10.0, idleRedis.calls()));
            md.append("| router | thread group | CPU ms/s | wake-ups/s |\n|---|---|---:|---:|\n");
            for (int r = 0; r < routers.size(); r++) {
                String name = routers.get(r).name();
                idle.get(r).entrySet().stream().filter(e -> e.getValue().cpuNanos() > 1_000_000)
                        .sorted(Comparator.comparingLong((Map.Entry<String, ThreadTimes.Group> e) -> -e.getValue().cpuNanos()))
                        .forEach(e -> md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %.1f |%n", name,
                                e.getKey(), e.getValue().cpuNanos() / 1e6 / 10, e.getValue().voluntarySwitches() / 10.0)));
            }

            for (Phase p : phases) {
                List<Path> recordings = new ArrayList<>();
                List<ThreadTimes> before = new ArrayList<>();
                for (ServerProcesses.Server router : routers) {
                    Path jfr = dir.resolve(p.key() + suffix(routers, router) + ".jfr").toAbsolutePath();
                    jcmd(router.pid(), "JFR.start", "name=" + p.key(), "settings=" + settings, "filename=" + jfr);
                    recordings.add(jfr);
                }
                for (ServerProcesses.Server router : routers) {
                    before.add(ThreadTimes.read(router.pid()));
                }
                RedisCommandStats redisBefore = RedisCommandStats.read(redisPort);
                double loadAverage = machine.sample();
                progress.say("profiling: %s, %d s", p.title(), o.seconds());
                InFlightLoad.Figures f = load.run(p.mix().sessions(known), p.inFlight(), o.seconds() * 1000L);
                List<Map<String, ThreadTimes.Group>> threads = new ArrayList<>();
                for (int r = 0; r < routers.size(); r++) {
                    threads.add(ThreadTimes.read(routers.get(r).pid()).since(before.get(r)));
                }
                RedisCommandStats redis = RedisCommandStats.read(redisPort).since(redisBefore);
                for (ServerProcesses.Server router : routers) {
                    jcmd(router.pid(), "JFR.stop", "name=" + p.key());
                }
                md.append(phaseHeader(p, f, redis, loadAverage));
                long samples = 0;
                for (int r = 0; r < routers.size(); r++) {
                    ServerProcesses.Server router = routers.get(r);
                    String key = p.key() + suffix(routers, router);
                    JfrDigest digest = render(recordings.get(r), o.out().resolve(key + ".svg"), "Router CPU samples: "
                            + p.title() + (routers.size() == 1 ? "" : ", " + router.name()) + " (JFR, Redis store)");
                    samples += digest.samples();
                    md.append(routers.size() == 1 ? "" : String.format(Locale.ROOT, "%n### %s%n", router.name()));
                    md.append(String.format(Locale.ROOT, "%nFlame graph: [%s.svg](%s.svg).%n", key, key));
                    md.append(section(f, threads.get(r), digest));
                }
                progress.say("recordings and folded stacks in %s", dir);
                progress.say("%s: %.0f req/s, p50 %.3f ms, p99 %.3f ms, %d samples", p.title(), f.perSecond(),
                        f.p50Millis(), f.p99Millis(), samples);
            }
        }
        String text = md.toString().replace("%LOAD%", machine.summary());
        Files.writeString(o.out().resolve("profile.md"), text);
        System.out.println(text);
        progress.say("written to %s", o.out());
        return 0;
    }

    /** A recording's name part for one of several routers: empty with one router. */
    private static String suffix(List<ServerProcesses.Server> routers, ServerProcesses.Server router) {
        return routers.size() == 1 ? "" : "-" + router.name();
    }

    /** A load's figures seen from the client and from Redis. */
    private static String phaseHeader(Phase p, InFlightLoad.Figures f, RedisCommandStats redis, double loadAverage) {
        long n = Math.max(1, f.answered() + f.errors());
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "%n## %s%n%n%,d requests in %.1f s: %.0f req/s, p50 %.3f ms, p99 %.3f ms, "
                + "%d errors; load average %.2f.%n", p.title(), f.answered(), f.seconds(),
                f.perSecond(), f.p50Millis(), f.p99Millis(), f.errors(), loadAverage));
        s.append(String.format(Locale.ROOT, "%nRedis: %.2f commands sent per request, background included (%s; Redis "
                + "counts the GET, PEXPIRE, ZADD, PUBLISH and XADD that scripts run as well as the EVALSHA itself, "
                + "and those are not round trips); Redis CPU %.1f µs per request.%n",
                (double) redis.sentCalls() / n, perRequest(redis.calls(), n), redis.cpuSeconds() * 1e6 / n));
        return s.toString();
    }

    /** One router's threads and samples during a load, per request of the whole load. */
    private static String section(InFlightLoad.Figures f, Map<String, ThreadTimes.Group> threads, JfrDigest d) {
        long n = Math.max(1, f.answered() + f.errors());
        StringBuilder s = new StringBuilder();
        s.append("\nRouter threads (from /proc: CPU and voluntary context switches, i.e. wake-ups, per request):\n\n");
        s.append("| thread group | threads | CPU µs/request | wake-ups/request | preempted/request |\n|---|---:|---:|---:|---:|\n");
        long cpuAll = 0;
        long wakeAll = 0;
        List<Map.Entry<String, ThreadTimes.Group>> rows = new ArrayList<>(threads.entrySet());
        rows.sort(Comparator.comparingLong(e -> -e.getValue().cpuNanos()));
        for (Map.Entry<String, ThreadTimes.Group> e : rows) {
            ThreadTimes.Group g = e.getValue();
            cpuAll += g.cpuNanos();
            wakeAll += g.voluntarySwitches();
            if (g.cpuNanos() / 1000.0 / n < 0.05 && (double) g.voluntarySwitches() / n < 0.005) {
                continue;
            }
            s.append(String.format(Locale.ROOT, "| %s | %d | %.2f | %.3f | %.3f |%n", e.getKey(), g.threads(),
                    g.cpuNanos() / 1000.0 / n, (double) g.voluntarySwitches() / n, (double) g.involuntarySwitches() / n));
        }
        s.append(String.format(Locale.ROOT, "| all | | %.2f | %.3f | |%n", cpuAll / 1000.0 / n, (double) wakeAll / n));

        s.append(String.format(Locale.ROOT, "%nJFR CPU samples: %,d. By library (innermost non-JDK frame):%n%n", d.samples()));
        s.append("| library | share of samples |\n|---|---:|\n");
        d.byLibrary().entrySet().stream().sorted(Map.Entry.comparingByValue(Comparator.reverseOrder()))
                .forEach(e -> s.append(String.format(Locale.ROOT, "| %s | %.1f%% |%n", e.getKey(),
                        100.0 * e.getValue() / Math.max(1, d.samples()))));
        s.append("\nBy thread group:\n\n| thread group | share of samples |\n|---|---:|\n");
        d.byThreadGroup().entrySet().stream().sorted(Map.Entry.comparingByValue(Comparator.reverseOrder())).limit(12)
                .forEach(e -> s.append(String.format(Locale.ROOT, "| %s | %.1f%% |%n", e.getKey(),
                        100.0 * e.getValue() / Math.max(1, d.samples()))));
        s.append("\nSamples passing through (inclusive), and on which threads:\n\n| method | share | threads |\n|---|---:|---|\n");
        for (String m : MARKERS) {
            long c = d.through(m);
            if (c == 0) {
                continue;
            }
            List<String> where = new ArrayList<>();
            d.throughByThread(m).entrySet().stream().sorted(Map.Entry.comparingByValue(Comparator.reverseOrder()))
                    .forEach(e -> where.add(String.format(Locale.ROOT, "%s %.0f%%", e.getKey(), 100.0 * e.getValue() / c)));
            s.append(String.format(Locale.ROOT, "| `%s` | %.1f%% | %s |%n", m, 100.0 * c / Math.max(1, d.samples()),
                    String.join(", ", where)));
        }
        List<Duration> pauses = new ArrayList<>(d.gcPauses());
        pauses.sort(null);
        if (!pauses.isEmpty()) {
            double total = pauses.stream().mapToDouble(x -> x.toNanos() / 1e6).sum();
            s.append(String.format(Locale.ROOT, "%nGC: %d pauses, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %.1f ms in "
                    + "all (%.2f%% of the run).%n", pauses.size(), ms(pauses, 0.5), ms(pauses, 0.99),
                    pauses.get(pauses.size() - 1).toNanos() / 1e6, total, total / 10 / f.seconds()));
        } else {
            s.append("\nGC: no collection during the recording.\n");
        }
        s.append(String.format(Locale.ROOT, "%nAllocation (JFR samples' weights): about %,.0f bytes per request. Each "
                        + "thread's first sample is left out (%,d samples, %,.1f MB): its weight is what the thread "
                        + "allocated before the recording started. Top sites:%n%n",
                (double) d.allocatedBytes() / n, d.leftOutSamples(), d.leftOutBytes() / 1e6));
        s.append("| site (innermost non-JDK frame, type) | bytes/request |\n|---|---:|\n");
        d.allocationBySite().entrySet().stream().sorted(Map.Entry.comparingByValue(Comparator.reverseOrder())).limit(10)
                .forEach(e -> s.append(String.format(Locale.ROOT, "| `%s` | %.0f |%n", e.getKey(), (double) e.getValue() / n)));
        return s.toString();
    }

    private static String perRequest(Map<String, Long> calls, long n) {
        List<String> parts = new ArrayList<>();
        calls.forEach((cmd, c) -> parts.add(String.format(Locale.ROOT, "%s %.3f", cmd, (double) c / n)));
        return String.join(", ", parts);
    }

    /** Nearest-rank quantile of sorted pauses, in milliseconds. */
    static double ms(List<Duration> sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1))).toNanos() / 1e6;
    }

    /**
     * Digests a JFR recording, writes its flame graph to {@code svg} and its folded stacks next to the recording
     * ({@code <recording>.folded.txt}).
     */
    static JfrDigest render(Path jfr, Path svg, String title) throws IOException {
        JfrDigest digest = JfrDigest.read(jfr, MARKERS);
        Files.writeString(svg, FlameGraph.svg(title, digest.folded(), digest::libraryOf));
        writeFolded(jfr.resolveSibling(jfr.getFileName() + ".folded.txt"), digest.folded());
        return digest;
    }

    /** {@code loadtest/bin/loadtest flame-graph --jfr FILE --out FILE.svg [--title TEXT]}: any recording of the router. */
    @Command(name = "flame-graph", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
            sortOptions = false, description = "Draw a flame graph (SVG) of the CPU samples of any JFR recording, "
                    + "and write its folded stacks next to it.")
    public static final class Render implements Callable<Integer> {

        @Option(names = "--jfr", required = true, paramLabel = "FILE.jfr", description = "The recording.")
        Path jfr;

        @Option(names = "--out", required = true, paramLabel = "FILE.svg", description = "The flame graph to write.")
        Path out;

        @Option(names = "--title", paramLabel = "TEXT", description = "Its title (default: CPU samples of FILE.jfr).")
        String title;

        @Spec
        CommandSpec spec;

        public Render() {
        }

        @Override
        public Integer call() throws IOException {
            if (!Files.isRegularFile(jfr)) {
                throw new ParameterException(spec.commandLine(), "--jfr " + jfr + ": no such file");
            }
            JfrDigest d = render(jfr, out, title != null ? title : "CPU samples of " + jfr);
            spec.commandLine().getErr().printf(Locale.ROOT, "%,d samples; flame graph in %s, folded stacks in "
                    + "%s.folded.txt%n", d.samples(), out, jfr);
            return 0;
        }
    }

    private static void writeFolded(Path file, Map<String, Long> folded) throws IOException {
        StringBuilder sb = new StringBuilder();
        folded.entrySet().stream().sorted(Map.Entry.comparingByValue(Comparator.reverseOrder()))
                .forEach(e -> sb.append(e.getKey()).append(' ').append(e.getValue()).append('\n'));
        Files.writeString(file, sb.toString());
    }

    /** JFR's own sampling period in the {@code profile} settings is 10 ms: too few samples for a short run. */
    static final String SAMPLE_PERIOD = "1 ms";

    /** The JDK's {@code profile} settings with Java stacks sampled every {@link #SAMPLE_PERIOD}. */
    private static Path samplingSettings(Path dir) throws IOException {
        Path profile = Path.of(System.getProperty("java.home"), "lib", "jfr", "profile.jfc");
        String jfc = Files.readString(profile);
        String changed = jfc.replace("<setting name=\"period\" control=\"method-sampling-java-interval\">10 ms</setting>",
                "<setting name=\"period\" control=\"method-sampling-java-interval\">" + SAMPLE_PERIOD + "</setting>");
        if (changed.equals(jfc)) {
            throw new IOException("did not find the Java sampling period in " + profile + " to change it");
        }
        Path out = dir.resolve("sampling.jfc");
        Files.writeString(out, changed);
        return out;
    }

    private static void jcmd(long pid, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
        cmd.add(Long.toString(pid));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("jcmd " + String.join(" ", args) + " failed: " + new String(out));
        }
    }
}
