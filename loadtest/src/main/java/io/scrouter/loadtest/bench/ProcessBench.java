package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.CommandText;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import io.scrouter.extproc.client.ExtProcClient;

import java.util.concurrent.Callable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The decision path's cost against the cheapest possible ext_proc server, each in its own process: the router
 * jar with the Redis store and with the embedded store, and a no-op server, all pinned to one core with
 * {@code redis-server}, the client on the other. Three loads (known sessions, a new session on every request,
 * a 90/10 mix), each with one router and with two; each target's warm-up, which lasts until its JIT has settled,
 * is thrown away, then the targets' rounds interleave. Writes a Markdown table of medians and ranges, with the command and the machine's
 * load, to {@code --out}; progress goes to stderr.
 *
 * <pre>loadtest/bin/loadtest bench [--seconds 5] [--warmup-seconds 5] [--warmup-max-seconds 120] [--rounds 3] [--in-flight 32] [--new-in-flight 4] ...</pre>
 */
@Command(name = "bench", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = {"The router jar (Redis and embedded store) against a no-op ext_proc server, each in its own "
                + "pinned process: known, new and mixed sessions, one router and two; each target's warm-up "
                + "(until its JIT settles) is discarded, then rounds interleave.",
                "Writes a Markdown table of medians and ranges, with the command and the machine's load; progress "
                        + "goes to stderr. Needs redis-server."})
public final class ProcessBench implements Callable<Integer> {

    static final List<String> SERVER_JVM = List.of("-Xmx1g");
    private static final long PAUSE_BETWEEN_ROUNDS_MILLIS = 500;

    @Option(names = "--seconds", defaultValue = "5", paramLabel = "N",
            description = "Length of each measured round, 1 to 600 (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--warmup-seconds", paramLabel = "N",
            description = "Shortest warm-up per target (discarded), 1 to 600 (default: as --seconds).")
    Integer warmupSeconds;

    @Option(names = "--warmup-max-seconds", defaultValue = "120", paramLabel = "N",
            description = "Longest warm-up per target, 1 to 1200: after --warmup-seconds the warm-up goes on, "
                    + "--seconds at a time, while the target's JIT compiler threads used more than 5% of its "
                    + "processes' CPU in its last part; no more than --warmup-seconds for a fixed warm-up "
                    + "(default: ${DEFAULT-VALUE}).")
    int warmupMaxSeconds;

    @Option(names = "--lead-in-seconds", defaultValue = "3", paramLabel = "N",
            description = "Unmeasured load at the start of every measured round, 0 to 60: a server that idled while "
                    + "the other targets ran recompiles its request path in its first seconds (default: ${DEFAULT-VALUE}).")
    int leadInSeconds;

    @Option(names = "--rounds", defaultValue = "3", paramLabel = "N",
            description = "Measured rounds per target, 1 to 20 (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--known", defaultValue = "2000", paramLabel = "N",
            description = "Sessions bound before the rounds, 1 to 1000000 (default: ${DEFAULT-VALUE}).")
    int known;

    @Option(names = "--in-flight", defaultValue = "32", paramLabel = "N",
            description = "Requests in flight, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--new-in-flight", defaultValue = "4", paramLabel = "N",
            description = "Requests in flight for the new-session latency load, 1 to 4096; new sessions also run "
                    + "at --in-flight (default: ${DEFAULT-VALUE}).")
    int newInFlight;

    @Option(names = "--loads", defaultValue = "known,mix,new", split = ",", paramLabel = "LOAD",
            description = "Loads to run, of known, mix and new (default: ${DEFAULT-VALUE}).")
    List<SessionMix> loads;

    @Option(names = "--routers", defaultValue = "1,2", split = ",", paramLabel = "N",
            description = "Routers sharing the load, 1 and/or 2 (default: ${DEFAULT-VALUE}).")
    List<Integer> routers;

    @Option(names = "--server-jvm", defaultValue = "-Xmx1g", paramLabel = "OPTIONS",
            description = "JVM options of every server process (routers and no-op), separated by spaces, such as "
                    + "a collector to compare (default: ${DEFAULT-VALUE}).")
    String serverJvm;

    @Option(names = "--follow-up-gather", paramLabel = "DURATION",
            description = "The Redis-backed routers' redis.followUpGather, 0ms to 20ms (default: the router's, 1ms).")
    String followUpGather;

    @Option(names = "--sched-trace",
            description = "Trace the servers' core with perf sched in every measured round, and report how long the "
                    + "servers' threads and redis-server waited for the core once woken. Needs perf and the kernel's "
                    + "sched tracepoints; traced rounds run slower, so their figures are not the targets'.")
    boolean schedTrace;

    @Option(names = "--bystanders", defaultValue = "idle", paramLabel = "PRIORITY",
            description = "Priority of the servers not measured while a target warms up or is measured, idle or "
                    + "normal: idle runs them under SCHED_IDLE, so that their compilers and probes take the core only "
                    + "when the measured target leaves it (default: ${DEFAULT-VALUE}).")
    String bystanders;

    @Option(names = "--out", defaultValue = "loadtest/results/bench.md", paramLabel = "FILE",
            description = "The report (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--note", defaultValue = "", paramLabel = "TEXT", description = "A note for the report.")
    String note;

    @Spec
    CommandSpec spec;

    public ProcessBench() {
    }

    /** The options, range-checked, loads and router counts without repeats. */
    record Settings(int seconds, int warmupSeconds, int warmupMaxSeconds, int leadInSeconds, int rounds, int known,
                    int inFlight,
                    int newInFlight,
                    List<SessionMix> loads, List<Integer> routers, List<String> serverJvm, String redisSettings,
                    Path out, String note, boolean schedTrace, boolean idleBystanders) {
    }

    Settings settings() {
        for (int r : routers) {
            if (r != 1 && r != 2) {
                throw new ParameterException(spec.commandLine(), "--routers takes 1 and/or 2, separated by commas; "
                        + "not " + r);
            }
        }
        if (!bystanders.equals("idle") && !bystanders.equals("normal")) {
            throw new ParameterException(spec.commandLine(), "--bystanders takes idle or normal; not " + bystanders);
        }
        int s = Bounds.within(spec, "--seconds", seconds, 1, 600);
        int warmup = warmupSeconds == null ? s : Bounds.within(spec, "--warmup-seconds", warmupSeconds, 1, 600);
        return new Settings(s, warmup, Bounds.within(spec, "--warmup-max-seconds", Math.max(warmup, warmupMaxSeconds),
                1, 1200),
                Bounds.within(spec, "--lead-in-seconds", leadInSeconds, 0, 60),
                Bounds.within(spec, "--rounds", rounds, 1, 20), Bounds.within(spec, "--known", known, 1, 1_000_000),
                Bounds.within(spec, "--in-flight", inFlight, 1, 4096),
                Bounds.within(spec, "--new-in-flight", newInFlight, 1, 4096), loads.stream().distinct().toList(),
                routers.stream().distinct().toList(), List.of(serverJvm.trim().split("\\s+")),
                Bounds.followUpGather(spec, "--follow-up-gather", followUpGather), out, note, schedTrace,
                bystanders.equals("idle"));
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
        Bystanders others = Bystanders.detect(o.idleBystanders(), cores);
        progress.say("%s", others.describe());
        if (o.schedTrace()) {
            String missing = SchedTrace.unavailable();
            if (missing != null) {
                throw new ParameterException(spec.commandLine(), "--sched-trace cannot trace here: " + missing);
            }
            if (!cores.pinned()) {
                throw new ParameterException(spec.commandLine(), "--sched-trace traces the servers' core, and "
                        + "the servers are not pinned to one here (" + cores.describe() + ")");
            }
        }
        MachineLoad machine = new MachineLoad();
        progress.say("load average now %.2f", machine.sample());
        // Each router count gets servers of its own, started fresh: with one router measured, a second Redis-backed
        // router on the same Redis would hear and cache every announcement of the measured one, and carry that work
        // into the rounds that follow, the no-op's among them (loadtest/README.md, "The servers not measured").
        List<Block> blocks = new ArrayList<>();
        List<String> othersBefore = List.of();
        List<String> othersAfter = List.of();
        Map<Target, List<Double>> pauses = new EnumMap<>(Target.class);
        String collector = "";
        double idlePerSecond = 0;
        String idleCalls = "";
        for (int routers : o.routers()) {
            Path dir = Files.createTempDirectory("scrouter-bench");
            progress.say("starting servers for %d router%s (logs in %s) ...", routers, routers == 1 ? "" : "s", dir);
            try (ServerProcesses servers = ServerProcesses.start(dir, cores, List.of(Target.values()), routers,
                    o.serverJvm(), o.redisSettings(), "", progress)) {
                List<String> busiest = MachineLoad.busiestOthers(servers.pids(), 3000, 5);
                progress.say("other busy processes: %s", busiest);
                if (othersBefore.isEmpty()) {
                    othersBefore = busiest;
                    int redisPort = servers.redis().port();
                    RedisCommandStats idleStart = RedisCommandStats.read(redisPort);
                    Thread.sleep(5_000);
                    RedisCommandStats idle = RedisCommandStats.read(redisPort).since(idleStart);
                    idlePerSecond = idle.totalCalls() / 5.0;
                    idleCalls = idle.calls().toString();
                    progress.say("Redis while idle: %.0f commands/s %s", idlePerSecond, idle.calls());
                    collector = GcPauses.collector(servers.gcLog(servers.of(Target.ROUTER_REDIS, 1).get(0).name()));
                }
                List<String> known = SessionMix.knownSet(o.known());
                for (Target t : Target.values()) {
                    for (ServerProcesses.Server s : servers.of(t, routers)) {
                        bind(s, known);
                    }
                    progress.say("%,d known sessions bound on every %s", known.size(), t.title());
                }
                for (SessionMix load : o.loads()) {
                    for (int inFlight : inFlights(load, o)) {
                        Block b = new Block(load, inFlight, routers);
                        runBlock(b, servers, others, load.sessions(known), o, progress, machine);
                        blocks.add(b);
                    }
                }
                othersAfter = MachineLoad.busiestOthers(servers.pids(), 3000, 5);
                for (Target t : Target.values()) {
                    for (ServerProcesses.Server s : servers.of(t, routers)) {
                        pauses.computeIfAbsent(t, x -> new ArrayList<>())
                                .addAll(GcPauses.read(servers.gcLog(s.name())));
                    }
                }
            }
        }
        // Reported as before: by load, then in-flight count, then router count.
        List<Block> ordered = new ArrayList<>();
        for (SessionMix load : o.loads()) {
            for (int inFlight : inFlights(load, o)) {
                for (int routers : o.routers()) {
                    blocks.stream().filter(b -> b.load() == load && b.inFlight() == inFlight && b.routers() == routers)
                            .findFirst().ifPresent(ordered::add);
                }
            }
        }
        List<String> gc = new ArrayList<>();
        for (Target t : Target.values()) {
            gc.add(t.title() + ": " + GcPauses.summary(pauses.getOrDefault(t, List.of())));
        }
        BenchReport.Context c = new BenchReport.Context(command, started, machineLine(),
                cores.describe() + "; " + others.describe(),
                String.join(" ", o.serverJvm()) + "; collector chosen by the JVM: " + collector
                        + " (a JVM started on one core sees one CPU); Java " + System.getProperty("java.version")
                        + "; routers with their defaults plus the store settings"
                        + (o.redisSettings().isEmpty() ? "" : " and " + o.redisSettings())
                        + "; the no-op on the routers' own network threads (JDK NIO, one event loop per CPU); fresh "
                        + "servers and Redis for each router count",
                machine.summary(), othersBefore, othersAfter, o.note(), o.seconds(), o.warmupSeconds(), o.warmupMaxSeconds(),
                o.leadInSeconds(), o.rounds(), o.known(),
                idlePerSecond, idleCalls, gc);
        String md = BenchReport.render(c, ordered);
        Files.createDirectories(o.out().toAbsolutePath().getParent());
        Files.writeString(o.out(), md);
        System.out.println(md);
        progress.say("written to %s", o.out());
        return 0;
    }

    /** The in-flight counts a load runs at: new sessions at both, the others at {@code --in-flight}. */
    private static List<Integer> inFlights(SessionMix load, Settings o) {
        return load == SessionMix.NEW ? List.of(o.newInFlight(), o.inFlight()) : List.of(o.inFlight());
    }

    private static void runBlock(Block b, ServerProcesses servers, Bystanders others, Supplier<String> sessions,
                                 Settings o, Progress progress, MachineLoad machine) throws Exception {
        Target[] targets = Target.values();
        long millis = o.seconds() * 1000L;
        progress.say("%s: warm-up per target, %d s or until its JIT settles, at most %d s (discarded)", b.title(),
                o.warmupSeconds(), o.warmupMaxSeconds());
        for (Target t : targets) {
            others.measuring(servers.pids(t, b.routers()), servers);
            Warmup w = warmUp(new InFlightLoad(servers.calls(t, b.routers())), servers.pids(t, b.routers()), sessions,
                    b.inFlight(), o.warmupSeconds(), o.seconds(), o.warmupMaxSeconds());
            b.warmedUp(t, w);
            progress.say("%s, warm-up, %s: %s", b.title(), t.title(), w.describe());
            Thread.sleep(PAUSE_BETWEEN_ROUNDS_MILLIS);
        }
        for (int round = 0; round < o.rounds(); round++) {
            for (int k = 0; k < targets.length; k++) {
                // Rotate the order every round, so that no target always follows the same one.
                Target t = targets[(round + k) % targets.length];
                double loadAverage = machine.sample();
                List<Long> pids = servers.pids(t, b.routers());
                List<Long> bystanders = bystanders(servers, t, pids);
                others.measuring(pids, servers);
                BeforeReadings before = new BeforeReadings(servers, t, pids, bystanders);
                // The routers' own account is read before the lead-in, not when measuring starts: a scrape makes a
                // router compile its event loop's select path again (loadtest/README.md, "the bench's own scrapes").
                before.router = routerView(servers, t, b.routers());
                // Traced from the lead-in on, so that perf's own start is not in the measured part.
                SchedTrace trace = o.schedTrace() ? SchedTrace.start(Cores.SERVER_CORE, o.leadInSeconds()
                        + o.seconds() + 1) : null;
                InFlightLoad.Figures f = new InFlightLoad(servers.calls(t, b.routers()))
                        .run(sessions, b.inFlight(), o.leadInSeconds() * 1000L, before::read, millis);
                long measuredUntil = System.nanoTime();
                CpuTimes cpu = CpuTimes.read(pids, bystanders).since(before.cpu);
                ContextSwitches switches = ContextSwitches.read(pids).since(before.switches);
                ContextSwitches redisSwitches = ContextSwitches.read(List.of(servers.redis().pid()))
                        .since(before.redisSwitches);
                RedisCommandStats redis = before.redis == null ? null
                        : RedisCommandStats.read(servers.redis().port()).since(before.redis);
                RouterView router = routerView(servers, t, b.routers()).since(before.router);
                b.add(Round.of(t, round, f, redis, loadAverage, router, cpu));
                b.switched(t, switches, redisSwitches, f.answered());
                if (trace != null) {
                    b.traced(t, trace.finish(pids, servers.redis().pid(), before.startedNanos, measuredUntil));
                }
                progress.say("%s, round %d/%d, %s: %.0f req/s, p50 %.3f ms, p99 %.3f ms, errors %d, CPU %.1f µs "
                                + "per answer (JIT %.1f), cores busy: servers' %.0f%% (other servers %.1f%%, "
                                + "host's steal %.1f%%), client's %.0f%% (steal %.1f%%) (load %.2f)",
                        b.title(), round + 1, o.rounds(), t.title(), f.perSecond(), f.p50Millis(), f.p99Millis(),
                        f.errors(), cpu.microsPerAnswer(f.answered()), cpu.jitMicrosPerAnswer(f.answered()),
                        100 * cpu.serverCoreBusyShare(), 100 * cpu.bystanderShareOfServerCore(),
                        100 * cpu.stealShare(false), 100 * cpu.clientCoreBusyShare(), 100 * cpu.stealShare(true),
                        loadAverage);
                Thread.sleep(PAUSE_BETWEEN_ROUNDS_MILLIS);
            }
        }
        others.release(servers);
    }

    /**
     * The JIT's share of a target's CPU under which its warm-up ends: the figures of a server still compiling its
     * request path are the compiler's, not the server's. Two routers sharing one core with Redis took over a minute
     * to get there at 4 new sessions in flight, where one router took under 20 s (loadtest/README.md, "Two routers'
     * warm-up").
     */
    static final double SETTLED_JIT_SHARE = 0.05;

    /** How a target's warm-up went: its length, and the JIT's share of the target's CPU in its last part. */
    record Warmup(int seconds, double lastJitShare) {

        /** Whether it ended because the JIT settled (or could not be measured), not at the cap. */
        boolean settled() {
            return !(lastJitShare > SETTLED_JIT_SHARE);
        }

        /** Its length and the JIT's last share, as the reports give them. */
        String describe() {
            return String.format(Locale.ROOT, "%d s (the JIT %.1f%% of its CPU at the end%s)", seconds,
                    100 * lastJitShare, settled() ? "" : ", still compiling at the cap");
        }
    }

    /**
     * Runs {@code load} for {@code minSeconds}, then on, {@code partSeconds} at a time, while the JIT compiler threads
     * of {@code pids} used more than {@link #SETTLED_JIT_SHARE} of those processes' CPU in the last part (the
     * warm-up's last {@code partSeconds}, then each added part), up to {@code maxSeconds} in all.
     */
    static Warmup warmUp(InFlightLoad load, List<Long> pids, Supplier<String> sessions, int inFlight, int minSeconds,
                         int partSeconds, int maxSeconds) throws InterruptedException {
        int part = Math.min(partSeconds, minSeconds);
        int done = minSeconds - part;
        if (done > 0) {
            load.run(sessions, inFlight, done * 1000L);
        }
        while (true) {
            CpuTimes before = CpuTimes.read(pids);
            load.run(sessions, inFlight, part * 1000L);
            done += part;
            double share = CpuTimes.read(pids).since(before).jitShare();
            part = nextWarmupPart(done, share, partSeconds, maxSeconds);
            if (part == 0) {
                return new Warmup(done, share);
            }
        }
    }

    /**
     * Seconds of warm-up still to run after {@code done} seconds whose last part's JIT share was {@code jitShare}:
     * none once it is at most {@link #SETTLED_JIT_SHARE} (or unknown, where {@code /proc} cannot be read) or the
     * warm-up reached {@code maxSeconds}; else one more part of {@code seconds}, cut short at the cap.
     */
    static int nextWarmupPart(int done, double jitShare, int seconds, int maxSeconds) {
        return jitShare > SETTLED_JIT_SHARE ? Math.max(0, Math.min(seconds, maxSeconds - done)) : 0;
    }

    /**
     * The server processes not measured in a round of {@code t}: the other targets' servers, idle then but on the
     * same core, and redis-server unless {@code t} is the Redis-backed router (whose work Redis's CPU is part of).
     */
    private static List<Long> bystanders(ServerProcesses servers, Target t, List<Long> measured) {
        long redis = servers.redis().pid();
        return servers.pids().stream()
                .filter(pid -> !measured.contains(pid) && !(t == Target.ROUTER_REDIS && pid == redis)).toList();
    }

    /**
     * A round's "before" readings: the routers' own account (a scrape of their metrics) before its lead-in, so that
     * it covers the lead-in as well; Redis's command counts and the servers' CPU when its measured part starts.
     */
    private static final class BeforeReadings {
        private final ServerProcesses servers;
        private final Target target;
        private final List<Long> pids;
        private final List<Long> bystanders;
        RouterView router;
        RedisCommandStats redis;
        CpuTimes cpu;
        ContextSwitches switches;
        ContextSwitches redisSwitches;
        long startedNanos;

        BeforeReadings(ServerProcesses servers, Target target, List<Long> pids, List<Long> bystanders) {
            this.servers = servers;
            this.target = target;
            this.pids = pids;
            this.bystanders = bystanders;
        }

        void read() {
            try {
                redis = target == Target.ROUTER_REDIS ? RedisCommandStats.read(servers.redis().port()) : null;
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("taking a round's readings before it is measured", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while taking a round's readings", e);
            }
            cpu = CpuTimes.read(pids, bystanders);
            switches = ContextSwitches.read(pids);
            redisSwitches = ContextSwitches.read(List.of(servers.redis().pid()));
            startedNanos = System.nanoTime();
        }
    }

    /** The routers' own account so far, all of the round's routers together; {@link RouterView#NONE} for the no-op. */
    private static RouterView routerView(ServerProcesses servers, Target t, int routers)
            throws java.io.IOException, InterruptedException {
        RouterView all = RouterView.NONE;
        for (ServerProcesses.Server s : servers.of(t, routers)) {
            all = all.plus(RouterView.scrape(s.metricsPort()));
        }
        return all;
    }

    /**
     * Sends one request per session to one server, 32 at a time, so that the server holds every binding; a refused
     * session is sent again, in passes ({@link KnownSessionBinder}).
     */
    static void bind(ServerProcesses.Server server, List<String> sessions) throws InterruptedException {
        awaitRouting(server);
        KnownSessionBinder.bind(server.name(), sessions, s -> server.calls()
                .sendAsync(ExtProcClient.sparkCall("ExecutePlan", s))
                .thenApply(r -> r.hasImmediateResponse() ? r.getImmediateResponse().getDetails() : null));
    }

    /**
     * Waits, bounded, until the server routes a new session: a router reports SERVING before its first pool read
     * has necessarily succeeded (on a busy machine its first Redis connection can time out; the next poll, a
     * second later, reads the pool).
     */
    static void awaitRouting(ServerProcesses.Server server) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        String last = "";
        while (System.nanoTime() < deadline) {
            java.util.concurrent.CompletableFuture<String> answer = new java.util.concurrent.CompletableFuture<>();
            server.calls().sendAsync(ExtProcClient.sparkCall("ExecutePlan", SessionMix.fresh())).whenComplete((r, e) -> answer.complete(
                    e != null ? e.toString() : r.hasImmediateResponse() ? r.getImmediateResponse().getDetails() : ""));
            try {
                last = answer.get(10, java.util.concurrent.TimeUnit.SECONDS);
                if (last.isEmpty()) {
                    return;
                }
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                last = e.toString();
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(server.name() + " routed no new session within 60 s; last answer: " + last);
    }

    static String machineLine() {
        String cpu = "";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
        } catch (java.io.IOException e) {
            cpu = "cpu unknown";
        }
        long memGiB = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    memGiB = Math.round(Long.parseLong(line.replaceAll("\\D", "")) / 1048576.0);
                }
            }
        } catch (java.io.IOException | NumberFormatException e) {
            memGiB = -1;
        }
        return String.format(Locale.ROOT, "%d cores online (%s), %d GiB, %s %s", Cores.onlineCores(), cpu, memGiB,
                System.getProperty("os.name"), System.getProperty("os.version"));
    }
}
