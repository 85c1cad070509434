package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Request;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * Heap held by active sessions: each session is placed through {@code SessionRouter.decide}, so it costs
 * one near-cache entry and one in-memory store binding, as in the embedded service. Heap is read with
 * {@link MemoryMXBean} after forced collections, before and after, and the difference printed per session.
 */
@Command(name = "bench-heap", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "Heap held by active sessions of the embedded store's decision path, "
        + "in this JVM: sessions placed through SessionRouter.decide, heap read after forced collections.")
public final class HeapBench implements Callable<Integer> {

    private static final String PATH = "/spark.connect.SparkConnectService/ExecutePlan";

    @Option(names = "--sessions", defaultValue = "100000,1000000", split = ",", paramLabel = "N",
            description = "Active session counts to measure, each 1 to 10000000 (default: ${DEFAULT-VALUE}).")
    List<Integer> sessions;

    @Spec
    CommandSpec spec;

    public HeapBench() {
    }

    @Override
    public Integer call() throws Exception {
        for (int n : sessions) {
            Bounds.within(spec, "--sessions", n, 1, 10_000_000);
        }
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.out.printf(Locale.ROOT, "| active sessions | heap used (MiB) | bytes per session |%n|---:|---:|---:|%n");
        for (int n : sessions) {
            long before = usedAfterGc(memory);
            DecisionPath path = new DecisionPath(64, n * 2L);
            for (int i = 0; i < n; i++) {
                String id = UUID.randomUUID().toString();
                if (!(path.router.decide(Request.of(PATH, id)).join() instanceof Decision.Route)) {
                    throw new IllegalStateException("session " + i + " was not placed");
                }
            }
            long after = usedAfterGc(memory);
            long cached = path.nearCache.size();
            System.out.printf(Locale.ROOT, "| %,d | %.1f | %.0f |%n", n, (after - before) / 1048576.0,
                    (double) (after - before) / n);
            if (cached < n * 0.99 || path.store.size() != n) {
                System.out.println("(warning: near-cache holds " + cached + ", store " + path.store.size() + ")");
            }
            path = null;
        }
        return 0;
    }

    private static long usedAfterGc(MemoryMXBean memory) throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(200);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
