package io.scrouter.loadtest.fault;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.testkit.redis.RedisProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Soak: one router in its own JVM under sustained session churn for {@code --minutes} (10 by default), its
 * heap sampled over JMX every {@code --every} seconds after a full GC, with the near-cache bounded small
 * ({@code --cache}, 20000) and many more sessions than that, so the bound is what keeps memory flat.
 */
@Command(name = "soak", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "One router in its own JVM under sustained session churn, its heap sampled "
        + "after a full GC, with the near-cache bounded small and many more sessions than that. Exit status 1 if the "
        + "heap grew, a request failed or a session moved. Needs redis-server.")
public final class Soak implements Callable<Integer> {

    @Option(names = "--minutes", defaultValue = "10", paramLabel = "N",
            description = "Length of the run, 0.1 to 1440 (default: ${DEFAULT-VALUE}).")
    double minutes;

    @Option(names = "--cache", defaultValue = "20000", paramLabel = "SESSIONS",
            description = "The router's near-cache bound, 100 to 10000000 (default: ${DEFAULT-VALUE}).")
    long cache;

    @Option(names = "--every", defaultValue = "10", paramLabel = "SECONDS",
            description = "Heap sampling interval, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long every;

    @Option(names = "--threads", defaultValue = "4", paramLabel = "N",
            description = "Traffic loops, 1 to 64 (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--heap", defaultValue = "512m", paramLabel = "SIZE",
            description = "The router's -Xmx, such as 512m or 2g (default: ${DEFAULT-VALUE}).")
    String heap;

    @Spec
    CommandSpec spec;

    public Soak() {
    }

    @Override
    public Integer call() throws Exception {
        if (!heap.matches("[1-9][0-9]*[kKmMgG]?")) {
            throw new ParameterException(spec.commandLine(), "--heap takes a JVM heap size such as 512m or 2g, not '"
                    + heap + "'");
        }
        return run(Bounds.within(spec, "--minutes", minutes, 0.1, 1440), Bounds.within(spec, "--cache", cache, 100, 10_000_000),
                Bounds.within(spec, "--every", every, 1, 3600), Bounds.within(spec, "--threads", threads, 1, 64), heap) ? 0 : 1;
    }

    private static boolean run(double minutes, long cache, long every, int threads, String maxHeap) throws Exception {
        long runMillis = (long) (minutes * 60_000);
        try (RedisProcess redis = RedisProcess.start()) {
            Config rc = new Config();
            rc.useSingleServer().setAddress(redis.address());
            RedissonClient admin = Redisson.create(rc);
            String redisYaml = "redis: {address: \"" + redis.address() + "\", timeout: 50ms, keyPrefix: soak}";
            // The child gets a longer Redis deadline than the 50 ms default: a cold JVM's first connection
            // (a PING under that deadline) can miss 50 ms on a loaded machine, and the router then fails to
            // start (see loadtest/README.md, Reliability). The soak measures heap, not latency.
            String childRedisYaml = "redis: {address: \"" + redis.address() + "\", timeout: 500ms, keyPrefix: soak}";
            try (Rig rig = new Rig(admin, redisYaml, "soak", 8, Duration.ofSeconds(10));
                 ChildRouter router = new ChildRouter(childRedisYaml + "\n"
                         + "sessions: {nearCacheMaxSize: " + cache + ", idleTtl: 30m, refreshEvery: 30s}\n", maxHeap)) {
                ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
                Thread.sleep(2_000); // first probes
                System.out.printf("soak: 1 router (child JVM, -Xmx%s, G1, near-cache bound %d sessions), 8 replicas, "
                        + "redis-server on 127.0.0.1:%d; %.1f min, heap sampled every %d s after a full GC (JMX)%n",
                        maxHeap, cache, redis.port(), minutes, every);
                System.out.println("router log: " + router.log());
                System.out.println();
                System.out.println("|   t (s) | heap used (MiB) | live after GC (MiB) | near-cache sessions | sessions started "
                        + "| requests in window | p50 / p99 (ms) |");
                System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
                List<HeapTrend.Sample> samples = new ArrayList<>();
                long start = System.nanoTime();
                try (SessionChurn churn = new SessionChurn(new ExtProcClient(channel, LoadTools.ANSWER_WAIT), threads, 500, 8,
                        runMillis / 1000 + 30, 500_000_000L)) {
                    churn.nextWindow();
                    while (true) {
                        long elapsed = (System.nanoTime() - start) / 1_000_000;
                        long next = Math.min(runMillis, (elapsed / (every * 1000) + 1) * every * 1000);
                        Thread.sleep(Math.max(0, next - elapsed));
                        double t = (System.nanoTime() - start) / 1e9;
                        SessionChurn.WindowFigures w = churn.nextWindow();
                        ChildRouter.Heap h = router.heap();
                        long cached = router.nearCacheSessions();
                        samples.add(new HeapTrend.Sample(t, h.liveBytes(), cached));
                        System.out.printf("| %7.0f | %15.1f | %19.1f | %19d | %16d | %18d | %.2f / %.2f |%n", t,
                                h.usedBytes() / 1048576.0, h.liveBytes() / 1048576.0, cached, churn.sessionsStarted(),
                                w.requests(), w.p50Millis(), w.p99Millis());
                        if (next >= runMillis) {
                            break;
                        }
                    }
                    churn.close();
                    HeapTrend.Verdict v = HeapTrend.judge(samples, cache);
                    System.out.println();
                    System.out.printf("%d requests (%d routed, %d rejected, %d transport errors), %d sessions started "
                                    + "(%.1f× the near-cache bound), %d requests routed away from their session's replica; "
                                    + "redis keys at the end: %s%n", churn.requests(), churn.routed(), churn.rejected(),
                            churn.failed(), churn.sessionsStarted(), churn.sessionsStarted() / (double) cache,
                            churn.moved(), redis.command("DBSIZE").replace(":", ""));
                    System.out.println(v.reason());
                    boolean ok = v.bounded() && churn.failed() == 0 && churn.moved() == 0
                            && churn.sessionsStarted() > cache;
                    System.out.println("VERDICT soak: " + (ok ? "PASS" : "FAIL") + " — heap "
                            + (v.bounded() ? "bounded" : "NOT shown bounded") + " after the near-cache filled, "
                            + churn.moved() + " moved, " + churn.failed() + " transport errors");
                    return ok;
                } finally {
                    channel.shutdownNow();
                }
            } finally {
                admin.shutdown();
            }
        }
    }
}
