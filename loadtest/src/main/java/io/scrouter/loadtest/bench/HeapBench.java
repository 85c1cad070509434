package io.scrouter.loadtest.bench;

import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Request;
import io.scrouter.loadtest.Args;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;

/**
 * Heap held by active sessions: each session is placed through {@code SessionRouter.decide}, so it costs
 * one near-cache entry and one in-memory store binding, as in the embedded service. Heap is read with
 * {@link MemoryMXBean} after forced collections, before and after, and the difference printed per session.
 */
public final class HeapBench {

    private static final String PATH = "/spark.connect.SparkConnectService/ExecutePlan";

    private HeapBench() {
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, Set.of("sessions"), "bench-heap [--sessions 100000,1000000]");
        String[] counts = args.get("sessions", "100000,1000000").split(",");
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.out.printf(Locale.ROOT, "| active sessions | heap used (MiB) | bytes per session |%n|---:|---:|---:|%n");
        for (String c : counts) {
            int n = Integer.parseInt(c.trim());
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
