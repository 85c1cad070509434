package io.scrouter.loadtest.bench;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.redis.RedisClients;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.redis.RedisSessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.CommandText;
import io.scrouter.testkit.redis.RedisProcess;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.redisson.api.RedissonClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The Redis client's share of a new session, measured apart from gRPC: the router's own store call
 * ({@code RedisSessionStore.findOrBind} on Redisson, configured by {@code RedisClients} as the router configures
 * it, its follow-up writes gathered as the router gathers them) against a pipelined RESP client on one Netty connection sending
 * the same four commands (the same SET NX PX, then ZADD, PUBLISH and XADD unawaited, one flush each). Both
 * run on one event loop in this process, pinned with {@code redis-server} to the servers' core as the router is;
 * each call names a new session. A warm-up per client is discarded, then rounds interleave, the order rotating.
 *
 * <pre>loadtest/bin/loadtest bench-redis-clients [--seconds 5] [--warmup-seconds 10] [--rounds 3] [--in-flight 4,32]</pre>
 */
@Command(name = "bench-redis-clients", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = {"The Redis client's share of a new session: the router's store call on "
        + "Redisson against a pipelined RESP client sending the same commands, on one event loop pinned with "
        + "redis-server to one core; rounds interleave after a discarded warm-up.",
        "Writes a Markdown table of medians and ranges; progress goes to stderr. Needs redis-server."})
public final class RedisClientBench implements Callable<Integer> {

    private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final String REPLICA = "replica-a@driver-1";

    @Option(names = "--seconds", defaultValue = "5", paramLabel = "N",
            description = "Length of each measured round, 1 to 600 (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--warmup-seconds", defaultValue = "10", paramLabel = "N",
            description = "Length of the discarded warm-up of each client, 1 to 600 (default: ${DEFAULT-VALUE}).")
    int warmupSeconds;

    @Option(names = "--rounds", defaultValue = "3", paramLabel = "N",
            description = "Measured rounds per client, 1 to 20 (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--in-flight", defaultValue = "4,32", split = ",", paramLabel = "N",
            description = "Calls in flight, 1 to 4096 each (default: ${DEFAULT-VALUE}).")
    List<Integer> inFlight;

    @Option(names = "--out", defaultValue = "loadtest/results/redis-clients.md", paramLabel = "FILE",
            description = "The report (default: ${DEFAULT-VALUE}).")
    Path out;

    @Spec
    CommandSpec spec;

    public RedisClientBench() {
    }

    record Settings(int seconds, int warmupSeconds, int rounds, List<Integer> inFlight, Path out) {
    }

    Settings settings() {
        List<Integer> levels = new ArrayList<>();
        for (int n : inFlight) {
            levels.add(Bounds.within(spec, "--in-flight", n, 1, 4096));
        }
        return new Settings(Bounds.within(spec, "--seconds", seconds, 1, 600),
                Bounds.within(spec, "--warmup-seconds", warmupSeconds, 1, 600),
                Bounds.within(spec, "--rounds", rounds, 1, 20), levels.stream().distinct().toList(), out);
    }

    @Override
    public Integer call() throws Exception {
        Settings o = settings();
        String command = CommandText.of(spec);
        String started = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
        Progress progress = new Progress();
        Cores cores = Cores.detect();
        MachineLoad machine = new MachineLoad();
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try (RedisProcess redis = RedisProcess.start()) {
            cores.pinServer(redis.pid());
            cores.pinServer(ProcessHandle.current().pid());
            progress.say("%s; this process runs on the servers' core too, as a router does", cores.describe());
            RedisKeys keys = new RedisKeys("rcb");
            RouterConfig.Redis settings = new RouterConfig.Redis(RouterConfig.RedisMode.SINGLE,
                    List.of(redis.address()), null, null, 0, keys.prefix(), RouterConfig.StoreCalls.DEFAULTS,
                    RouterConfig.Redis.DEFAULT_FOLLOW_UP_GATHER);
            Duration idle = Duration.ofMinutes(30);
            RedissonClient redisson = RedisClients.create(settings, loop);
            PipelinedResp resp = PipelinedResp.connect(loop, "127.0.0.1", redis.port());
            try {
                RedisSessionStore store = new RedisSessionStore(redisson, keys,
                        new SessionTtls(idle, Duration.ofHours(1), Duration.ofMinutes(10)), System::currentTimeMillis,
                        loop.next());
                store.prepare().get(30, TimeUnit.SECONDS);
                String ttl = Long.toString(idle.toMillis());
                Map<String, Function<String, CompletableFuture<?>>> clients = new LinkedHashMap<>();
                clients.put("Redisson, the router's store call", id -> store.findOrBind(id, REPLICA));
                clients.put("pipelined RESP, one connection", id -> {
                    CompletableFuture<Object> bound = resp.call("SET", keys.session(id), REPLICA, "PX", ttl, "NX");
                    return bound.thenApply(reply -> {
                        String message = id + " " + REPLICA;
                        resp.call("ZADD", keys.replicaSessions("replica-a"),
                                Long.toString(System.currentTimeMillis() + idle.toMillis()), id);
                        resp.call("PUBLISH", keys.bindingChannel(), message);
                        resp.call("XADD", keys.bindingFeed(), "MAXLEN", "~", "200000", "*", "b", message);
                        return reply;
                    });
                });
                Map<Integer, Map<String, List<InFlightLoad.Figures>>> results = new LinkedHashMap<>();
                for (int n : o.inFlight()) {
                    Map<String, List<InFlightLoad.Figures>> byClient = new LinkedHashMap<>();
                    for (Map.Entry<String, Function<String, CompletableFuture<?>>> c : clients.entrySet()) {
                        InFlightLoad.Figures warm = run(loop, c.getValue(), n, o.warmupSeconds() * 1000L);
                        progress.say("%d in flight, warm-up, %s: %.0f calls/s (discarded)", n, c.getKey(),
                                warm.perSecond());
                        byClient.put(c.getKey(), new ArrayList<>());
                        flush(resp);
                    }
                    List<String> names = new ArrayList<>(clients.keySet());
                    for (int r = 0; r < o.rounds(); r++) {
                        for (int i = 0; i < names.size(); i++) {
                            String name = names.get((i + r) % names.size());
                            InFlightLoad.Figures round = run(loop, clients.get(name), n, o.seconds() * 1000L);
                            byClient.get(name).add(round);
                            progress.say("%d in flight, round %d/%d, %s: %.0f calls/s, p50 %.3f ms, p99 %.3f ms, "
                                            + "errors %d (load %.2f)", n, r + 1, o.rounds(), name, round.perSecond(),
                                    round.p50Millis(), round.p99Millis(), round.errors(), machine.sample());
                            flush(resp);
                        }
                    }
                    results.put(n, byClient);
                }
                String md = report(command, started, cores, machine, o, results);
                Files.createDirectories(o.out().toAbsolutePath().getParent());
                Files.writeString(o.out(), md);
                System.out.println(md);
                progress.say("written to %s", o.out());
            } finally {
                resp.close();
                redisson.shutdown();
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        return 0;
    }

    /** Empties Redis between rounds, so that every round starts with the same data set. */
    private static void flush(PipelinedResp resp) throws Exception {
        resp.call("FLUSHALL").get(30, TimeUnit.SECONDS);
    }

    /**
     * {@code inFlight} calls always outstanding for {@code millis}, each started on the event loop when the last
     * one's reply arrived there, as a router does; returns once every call sent has been answered.
     */
    static InFlightLoad.Figures run(EventLoopGroup loop, Function<String, CompletableFuture<?>> call, int inFlight, long millis)
            throws InterruptedException {
        Recorder recorder = new Recorder(HIGHEST_NANOS, 3);
        AtomicLong errors = new AtomicLong();
        CountDownLatch ended = new CountDownLatch(inFlight);
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            if (System.nanoTime() >= end) {
                ended.countDown();
                return;
            }
            long sent = System.nanoTime();
            call.apply(SessionMix.fresh()).whenComplete((reply, error) -> {
                if (error == null) {
                    recorder.recordValue(Math.min(HIGHEST_NANOS, System.nanoTime() - sent));
                } else {
                    errors.incrementAndGet();
                }
                next[0].run();
            });
        };
        for (int i = 0; i < inFlight; i++) {
            loop.execute(next[0]);
        }
        if (!ended.await(millis + 30_000, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(ended.getCount() + " of " + inFlight
                    + " calls were still unanswered 30 s after the round ended");
        }
        Histogram h = recorder.getIntervalHistogram();
        return new InFlightLoad.Figures(h.getTotalCount(), errors.get(), (System.nanoTime() - start) / 1e9, h,
                new long[0], Map.of());
    }

    private static String report(String command, String started, Cores cores, MachineLoad machine, Settings o,
                                 Map<Integer, Map<String, List<InFlightLoad.Figures>>> results) {
        StringBuilder md = new StringBuilder("# The Redis client's share of a new session\n\n");
        md.append("Command: `").append(command).append("`  \n");
        md.append("Started: ").append(started).append("  \n");
        md.append("Machine: ").append(ProcessBench.machineLine()).append("  \n");
        md.append("Cores: ").append(cores.describe()).append("; the clients run on the servers' core  \n");
        md.append("Load average during the run: ").append(machine.summary()).append("\n\n");
        md.append(String.format(Locale.ROOT, "A warm-up of %d s per client is discarded, then %d rounds of %d s per "
                + "client interleave. Each call binds a new session: Redisson runs `RedisSessionStore.findOrBind` "
                + "(SET NX PX, then ZADD, PUBLISH and XADD gathered as the router gathers them); the pipelined client sends the "
                + "same SET NX PX, then the same three commands, on one connection. Latency: call to reply, "
                + "HdrHistogram. Ratios pair rounds of the same index; figures are `median [min–max]`.%n",
                o.warmupSeconds(), o.rounds(), o.seconds()));
        for (Map.Entry<Integer, Map<String, List<InFlightLoad.Figures>>> level : results.entrySet()) {
            md.append(String.format(Locale.ROOT, "%n## %d in flight%n%n", level.getKey()));
            md.append("| client | calls/s | p50 (ms) | p99 (ms) | errors |\n|---|---:|---:|---:|---:|\n");
            List<List<InFlightLoad.Figures>> all = new ArrayList<>(level.getValue().values());
            for (Map.Entry<String, List<InFlightLoad.Figures>> c : level.getValue().entrySet()) {
                List<InFlightLoad.Figures> rs = c.getValue();
                md.append("| ").append(c.getKey())
                        .append(" | ").append(spread(rs, InFlightLoad.Figures::perSecond).format("%.0f"))
                        .append(" | ").append(spread(rs, InFlightLoad.Figures::p50Millis).format("%.3f"))
                        .append(" | ").append(spread(rs, InFlightLoad.Figures::p99Millis).format("%.3f"))
                        .append(" | ").append(rs.stream().mapToLong(InFlightLoad.Figures::errors).sum()).append(" |\n");
            }
            if (all.size() == 2) {
                List<InFlightLoad.Figures> redisson = all.get(0);
                List<InFlightLoad.Figures> pipelined = all.get(1);
                md.append(String.format(Locale.ROOT, "%nPipelined ÷ Redisson: calls/s %s, p50 %s, p99 %s.%n",
                        ratio(pipelined, redisson, InFlightLoad.Figures::perSecond).format("%.2f"),
                        ratio(pipelined, redisson, InFlightLoad.Figures::p50Millis).format("%.2f"),
                        ratio(pipelined, redisson, InFlightLoad.Figures::p99Millis).format("%.2f")));
            }
        }
        return md.toString();
    }

    private static Spread spread(List<InFlightLoad.Figures> rounds, ToDoubleFunction<InFlightLoad.Figures> f) {
        return Spread.of(rounds.stream().map(f::applyAsDouble).toList());
    }

    private static Spread ratio(List<InFlightLoad.Figures> a, List<InFlightLoad.Figures> b, ToDoubleFunction<InFlightLoad.Figures> f) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            ratios.add(f.applyAsDouble(a.get(i)) / f.applyAsDouble(b.get(i)));
        }
        return Spread.of(ratios);
    }
}
