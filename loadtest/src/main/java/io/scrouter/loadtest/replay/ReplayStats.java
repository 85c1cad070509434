package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.bench.Latencies;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** What a replay against the service observed; filled from gRPC and replica threads at once. */
public final class ReplayStats {

    /** One look at every replica: trace time, then sessions and demand in replica order. */
    public record Sample(double traceSeconds, int[] sessions, double[] demand) {
    }

    final Latencies newSessionDecisions;
    final Latencies knownSessionDecisions;
    final AtomicLong transportErrors = new AtomicLong();
    final Map<Integer, AtomicLong> rejectionsByCode = new ConcurrentHashMap<>();
    final AtomicLong routedElsewhere = new AtomicLong();
    final AtomicLong routedOutsidePool = new AtomicLong();
    final AtomicLong queriesSubmitted = new AtomicLong();
    final AtomicLong queriesFinished = new AtomicLong();
    final Map<String, AtomicInteger> placements = new ConcurrentHashMap<>();
    private final List<Double> slowdowns = new ArrayList<>();
    private final List<Sample> timeline = new ArrayList<>();

    ReplayStats(int expectedRequests) {
        this.newSessionDecisions = new Latencies(expectedRequests + 16);
        this.knownSessionDecisions = new Latencies(expectedRequests + 16);
    }

    void rejected(int grpcCode) {
        rejectionsByCode.computeIfAbsent(grpcCode, c -> new AtomicLong()).incrementAndGet();
    }

    void placed(String replicaId) {
        placements.computeIfAbsent(replicaId, r -> new AtomicInteger()).incrementAndGet();
    }

    synchronized void queryFinished(double slowdown) {
        slowdowns.add(slowdown);
        queriesFinished.incrementAndGet();
    }

    synchronized void sample(Sample s) {
        timeline.add(s);
    }

    /** Completed queries' slowdowns, sorted. */
    public synchronized double[] sortedSlowdowns() {
        return slowdowns.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }

    public synchronized List<Sample> timeline() {
        return List.copyOf(timeline);
    }

    public long queriesSubmitted() {
        return queriesSubmitted.get();
    }

    public long routedElsewhere() {
        return routedElsewhere.get();
    }

    public long errors() {
        return transportErrors.get() + rejectionsByCode.values().stream().mapToLong(AtomicLong::get).sum();
    }
}
