package io.scrouter.loadtest.fault;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.scrouter.extproc.client.ExtProcClient;

import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Long-running session traffic with bounded memory, for the soak: a fixed number of active sessions, each
 * request to a random one of them, and sessions replaced by new ones as they end (half send ReleaseSession,
 * half are simply abandoned, as clients that die do) so the router keeps meeting sessions it has never seen.
 * Only counters and one latency window are kept, never per-request records. Bounded in time and count.
 */
final class SessionChurn implements AutoCloseable {

    /** Latencies of one reporting window; a few late writes after a swap are harmless. */
    private static final class Window {
        final long[] nanos = new long[200_000];
        final AtomicInteger n = new AtomicInteger();

        void add(long v) {
            int i = n.getAndIncrement();
            if (i < nanos.length) {
                nanos[i] = v;
            }
        }

        double millis(double q) {
            int count = Math.min(n.get(), nanos.length);
            if (count == 0) {
                return Double.NaN;
            }
            long[] sorted = Arrays.copyOf(nanos, count);
            Arrays.sort(sorted);
            return sorted[Math.max(0, Math.min(count - 1, (int) Math.ceil(q * count) - 1))] / 1e6;
        }
    }

    record WindowFigures(long requests, double p50Millis, double p99Millis) {
    }

    private static final String[] METHODS = {"ExecutePlan", "AnalyzePlan", "Config", "ReattachExecute",
            "ReleaseExecute"};

    private final ExtProcClient envoy;
    private final ExecutorService workers;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final long deadlineNanos;
    private final long maxRequests;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong routed = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong moved = new AtomicLong();
    private final AtomicLong started = new AtomicLong();
    private volatile Window window = new Window();

    /**
     * @param activePerThread sessions each loop keeps active (loops own disjoint sessions, so a released
     *                        session is never used again by another loop)
     * @param newEvery        one request in this many first replaces its session by a new one
     */
    SessionChurn(ExtProcClient envoy, int threads, int activePerThread, int newEvery, long maxSeconds,
                 long maxRequests) {
        this.envoy = envoy;
        this.deadlineNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(maxSeconds);
        this.maxRequests = maxRequests;
        this.workers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "soak-traffic");
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < threads; i++) {
            workers.submit(() -> loop(activePerThread, newEvery));
        }
    }

    private void loop(int active, int newEvery) {
        String[] sessions = new String[active];
        String[] homes = new String[active];
        for (int i = 0; i < active; i++) {
            sessions[i] = newSession();
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stop.get() && System.nanoTime() < deadlineNanos && requests.get() < maxRequests) {
            int i = random.nextInt(active);
            if (random.nextInt(newEvery) == 0) {
                if (random.nextBoolean() && homes[i] != null) {
                    send("ReleaseSession", sessions[i], null);
                }
                sessions[i] = newSession();
                homes[i] = null;
            }
            String upstream = send(METHODS[random.nextInt(METHODS.length)], sessions[i], homes[i]);
            if (homes[i] == null) {
                homes[i] = upstream;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private String newSession() {
        started.incrementAndGet();
        return UUID.randomUUID().toString();
    }

    /** Sends one request; returns the address it was routed to, or null. Counts a route away from home as moved. */
    private String send(String method, String session, String home) {
        long start = System.nanoTime();
        requests.incrementAndGet();
        try {
            ProcessingResponse r = envoy.send(ExtProcClient.sparkCall(method, session));
            window.add(System.nanoTime() - start);
            String upstream = ExtProcClient.upstreamOf(r);
            if (upstream == null) {
                rejected.incrementAndGet();
            } else {
                routed.incrementAndGet();
                if (home != null && !home.equals(upstream)) {
                    moved.incrementAndGet();
                }
            }
            return upstream;
        } catch (Exception e) {
            failed.incrementAndGet();
            return null;
        }
    }

    /** The window since the last call: request count and latency quantiles; starts a new window. */
    WindowFigures nextWindow() {
        Window w = window;
        window = new Window();
        return new WindowFigures(w.n.get(), w.millis(0.5), w.millis(0.99));
    }

    long requests() {
        return requests.get();
    }

    long routed() {
        return routed.get();
    }

    long rejected() {
        return rejected.get();
    }

    long failed() {
        return failed.get();
    }

    long moved() {
        return moved.get();
    }

    long sessionsStarted() {
        return started.get();
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        workers.shutdown();
        workers.awaitTermination(20, TimeUnit.SECONDS);
    }
}
