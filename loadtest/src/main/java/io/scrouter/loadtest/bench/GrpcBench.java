package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * The service over real gRPC on loopback, against a no-op ext_proc server measured in the same run:
 * known sessions (near-cache hits), new sessions (Redis writes) and near-cache misses (sessions another
 * router bound), each at full speed (closed loop) and at one fixed offered load (open loop). Prints the
 * figures and the ratios to the baseline. Client, servers and redis-server share this machine's cores,
 * so absolute numbers are a floor; the ratios are the point.
 */
@Command(name = "bench-grpc", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "The older benchmark, all in one JVM (superseded by bench): the service over "
        + "gRPC on loopback against a no-op ext_proc server, known and new sessions and near-cache misses, closed "
        + "loop and at one offered rate. Needs redis-server.")
public final class GrpcBench implements Callable<Integer> {

    private static final String PREFIX = "bench";

    @Option(names = "--rate", defaultValue = "2000", paramLabel = "PER_SECOND",
            description = "Offered load of the latency columns, 1 to 1000000 requests/s (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--seconds", defaultValue = "8", paramLabel = "N",
            description = "Length of each phase, 1 to 600 (default: ${DEFAULT-VALUE}).")
    long seconds;

    @Option(names = "--concurrency", defaultValue = "32", paramLabel = "N",
            description = "Streams of the closed-loop maxima, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Spec
    CommandSpec spec;

    public GrpcBench() {
    }

    @Override
    public Integer call() throws Exception {
        double rate = Bounds.within(spec, "--rate", this.rate, 1, 1_000_000);
        long millis = Bounds.within(spec, "--seconds", seconds, 1, 600) * 1_000;
        int concurrency = Bounds.within(spec, "--concurrency", this.concurrency, 1, 4096);

        List<AutoCloseable> closeLast = new ArrayList<>();
        try (RedisProcess redis = RedisProcess.start()) {
            Config rc = new Config();
            rc.useSingleServer().setAddress(redis.address());
            RedissonClient admin = Redisson.create(rc);
            RedisInstanceStore instances = new RedisInstanceStore(admin, new RedisKeys(PREFIX));
            for (int i = 0; i < 4; i++) {
                SparkRestStandIn rest = new SparkRestStandIn().load(i, 0, 8);
                closeLast.add(rest);
                instances.publish(new Replica("r" + i, "127.0.0.1:" + (17000 + i), rest.url(), ReplicaState.READY),
                        Duration.ofMinutes(30)).get();
            }
            RouterServer routerA = router(redis);
            RouterServer routerB = router(redis);
            Server noop = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                    .addService(new NoopProcessor()).build().start();
            ManagedChannel toNoop = channel(noop.getPort());
            ManagedChannel toA = channel(routerA.port());
            ManagedChannel toB = channel(routerB.port());
            Thread.sleep(1_500); // first probes and counts
            try {
                ExtProcLoad noopLoad = new ExtProcLoad(toNoop);
                ExtProcLoad a = new ExtProcLoad(toA);
                ExtProcLoad b = new ExtProcLoad(toB);

                List<String> known = new ArrayList<>();
                for (int i = 0; i < 10_000; i++) {
                    known.add(UUID.randomUUID().toString());
                }
                bindAll(a, known);
                Supplier<String> knownPick = () -> known.get(ThreadLocalRandom.current().nextInt(known.size()));
                Supplier<String> fresh = () -> UUID.randomUUID().toString();

                // Sessions bound by router B and never seen by A: every request to A misses its near-cache.
                int missNeeded = (int) (rate * (millis + 2_000) / 1000 + 25_000 * millis / 1000);
                List<String> boundElsewhere = new ArrayList<>(missNeeded);
                for (int i = 0; i < missNeeded; i++) {
                    boundElsewhere.add(UUID.randomUUID().toString());
                }
                // Written straight into Redis, as a router that is gone would have left them: sessions bound through
                // a live router reach this one over the binding feed and would no longer be misses.
                System.err.println("binding " + missNeeded + " sessions in Redis behind the router's back ...");
                bindInRedis(admin, boundElsewhere);
                ConcurrentLinkedQueue<String> misses = new ConcurrentLinkedQueue<>(boundElsewhere);
                Supplier<String> missPick = () -> {
                    String s = misses.poll();
                    return s != null ? s : UUID.randomUUID().toString();
                };

                System.err.println("measuring ...");
                // Same offered load first, for every kind, so no latency figure inherits a backlog left by a
                // saturating phase; then the closed-loop maxima.
                ExtProcLoad.Result noopRate = atRate(noopLoad, knownPick, rate, millis);
                ExtProcLoad.Result knownRate = atRate(a, knownPick, rate, millis);
                ExtProcLoad.Result newRate = atRate(b, fresh, rate, millis);
                ExtProcLoad.Result missRate = atRate(a, missPick, rate, millis);
                Phase noopP = new Phase("no-op baseline", max(noopLoad, knownPick, millis, concurrency), noopRate);
                Phase knownP = new Phase("known session (near-cache hit)", max(a, knownPick, millis, concurrency),
                        knownRate);
                Phase newP = new Phase("new session (placement + one Redis find-or-bind)", max(b, fresh, millis, concurrency),
                        newRate);
                Phase missP = new Phase("near-cache miss (one Redis find-or-bind)", max(a, missPick, millis, concurrency),
                        missRate);
                print(List.of(noopP, knownP, newP, missP), rate, concurrency, misses.isEmpty());
            } finally {
                toNoop.shutdownNow();
                toA.shutdownNow();
                toB.shutdownNow();
                noop.shutdownNow();
                routerA.close();
                routerB.close();
                admin.shutdown();
            }
        } finally {
            for (AutoCloseable c : closeLast) {
                c.close();
            }
        }
        return 0;
    }

    private record Phase(String name, ExtProcLoad.Result max, ExtProcLoad.Result atRate) {
    }

    private static ExtProcLoad.Result atRate(ExtProcLoad load, Supplier<String> sessions, double rate, long millis)
            throws InterruptedException {
        load.openLoop(sessions, rate, 2_000); // warm-up: JIT, connections
        ExtProcLoad.Result r = load.openLoop(sessions, rate, millis);
        Thread.sleep(1_000); // let background store writes drain before the next phase
        return r;
    }

    private static ExtProcLoad.Result max(ExtProcLoad load, Supplier<String> sessions, long millis, int concurrency)
            throws InterruptedException {
        ExtProcLoad.Result r = load.closedLoop(sessions, concurrency, millis);
        Thread.sleep(1_000);
        return r;
    }

    private static void bindInRedis(RedissonClient redis, List<String> sessions) {
        RedisKeys keys = new RedisKeys(PREFIX);
        for (int from = 0; from < sessions.size(); from += 5_000) {
            org.redisson.api.RBatch batch = redis.createBatch();
            for (String session : sessions.subList(from, Math.min(sessions.size(), from + 5_000))) {
                batch.getBucket(keys.session(session), org.redisson.client.codec.StringCodec.INSTANCE)
                        .setAsync("r" + ThreadLocalRandom.current().nextInt(4), Duration.ofMinutes(30));
            }
            batch.execute();
        }
    }

    private static void bindAll(ExtProcLoad router, List<String> sessions) throws InterruptedException {
        ConcurrentLinkedQueue<String> todo = new ConcurrentLinkedQueue<>(sessions);
        while (!todo.isEmpty()) {
            int before = todo.size();
            router.closedLoop(() -> {
                String s = todo.poll();
                return s != null ? s : sessions.get(0);
            }, 32, Math.max(100, before / 10));
        }
    }

    private static void print(List<Phase> phases, double rate, int concurrency, boolean missesRanOut) {
        Phase base = phases.get(0);
        System.out.printf(Locale.ROOT, "%next_proc over gRPC on loopback (%d cores, client, servers and redis-server "
                + "on one machine)%n", Runtime.getRuntime().availableProcessors());
        System.out.printf(Locale.ROOT, "%n| request kind | max throughput (req/s, %d streams) | vs no-op | p50 at %.0f req/s "
                + "(ms) | p99 at %.0f req/s (ms) | p99 vs no-op | errors |%n", concurrency, rate, rate);
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        for (Phase p : phases) {
            System.out.printf(Locale.ROOT, "| %s | %.0f | %.2f× | %.3f | %.3f | %.2f× | %d |%n", p.name(),
                    p.max().perSecond(), p.max().perSecond() / base.max().perSecond(), p.atRate().p50Micros() / 1000,
                    p.atRate().p99Micros() / 1000, p.atRate().p99Micros() / base.atRate().p99Micros(),
                    p.max().errors() + p.atRate().errors());
        }
        if (missesRanOut) {
            System.out.println("(note: the pre-bound sessions ran out; the last near-cache-miss requests were new sessions)");
        }
    }

    private static RouterServer router(RedisProcess redis) throws Exception {
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0}
                redis: {address: "%s", timeout: 200ms, keyPrefix: %s}
                pool: {pollInterval: 1s}
                probe: {interval: 1s, timeout: 1s, staleAfter: 5s}
                sessions: {idleTtl: 30m, refreshEvery: 30s}
                admin: {port: 0}
                """.formatted(redis.address(), PREFIX);
        return RouterServer.start(ConfigLoader.parse(yaml, Map.of()));
    }

    private static ManagedChannel channel(int port) {
        return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().directExecutor()
                .flowControlWindow(1 << 20).build();
    }
}
