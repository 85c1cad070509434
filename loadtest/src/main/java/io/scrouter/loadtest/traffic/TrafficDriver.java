package io.scrouter.loadtest.traffic;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.scrouter.extproc.client.ExtProcClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Steady Envoy-like traffic against one or more routers, for fault tests: a fixed set of long-lived sessions
 * issuing requests, plus a trickle of new sessions, each request sent to a random router (as Envoy balances
 * its ext_proc cluster). Bounded in time and in request count; loopback only.
 */
public final class TrafficDriver implements AutoCloseable {

    /** One request's result. {@code upstream} is null when rejected; then {@code grpcStatus} says why. */
    public record Result(long atNanos, String session, int router, String upstream, int grpcStatus, long nanos,
                         boolean newSession) {
    }

    private final List<ExtProcClient> routers;
    private final List<String> sessions = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final boolean reuseNewSessions;
    /** Sessions that have had a request routed, so a clean-up call may follow. */
    private final java.util.Set<String> routed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Result> results = new ConcurrentLinkedQueue<>();
    /** Kept beside the queue: its size() walks every element, which turns a long run quadratic. */
    private final java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong();
    private final ExecutorService workers;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final long maxRequests;
    private final long deadlineNanos;
    private final Duration requestBound;

    /**
     * @param routers          Envoy stand-ins, one per router instance
     * @param longLived        sessions that keep sending requests
     * @param threads          concurrent request loops
     * @param newSessionEvery  one request in this many opens a new session (0: none)
     * @param maxDuration      hard bound on how long the driver runs
     * @param maxRequests      hard bound on the number of requests
     * @param reuseNewSessions new sessions join the set that later requests pick from, so they are seen again,
     *                         possibly by another router
     * @param requestBound     the longest one request may take before its client gives up (the clients' answer
     *                         deadline, e.g. {@code Patience.decision}): a driver that completes nothing for this
     *                         long has stalled
     */
    public TrafficDriver(List<ExtProcClient> routers, int longLived, int threads, int newSessionEvery,
                         Duration maxDuration, long maxRequests, boolean reuseNewSessions, Duration requestBound) {
        this.routers = routers;
        this.reuseNewSessions = reuseNewSessions;
        this.requestBound = requestBound;
        for (int i = 0; i < longLived; i++) {
            sessions.add(UUID.randomUUID().toString());
        }
        this.maxRequests = maxRequests;
        this.deadlineNanos = System.nanoTime() + maxDuration.toNanos();
        this.workers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "traffic");
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < threads; i++) {
            workers.submit(() -> loop(newSessionEvery));
        }
    }

    public List<String> sessions() {
        return List.copyOf(sessions);
    }

    private void loop(int newSessionEvery) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String[] methods = {"ExecutePlan", "AnalyzePlan", "Config", "ReattachExecute", "ReleaseExecute"};
        while (!stop.get() && System.nanoTime() < deadlineNanos && count.get() < maxRequests) {
            boolean fresh = newSessionEvery > 0 && random.nextInt(newSessionEvery) == 0;
            String session = fresh ? UUID.randomUUID().toString() : sessions.get(random.nextInt(sessions.size()));
            int router = random.nextInt(routers.size());
            // As a Spark client does: a session starts with work; clean-up calls (ReleaseExecute) follow it.
            String method = routed.contains(session) ? methods[random.nextInt(methods.length)] : "ExecutePlan";
            long start = System.nanoTime();
            try {
                ProcessingResponse r = routers.get(router).send(ExtProcClient.sparkCall(method, session));
                if (ExtProcClient.upstreamOf(r) != null) {
                    routed.add(session);
                }
                long took = System.nanoTime() - start;
                results.add(new Result(start, session, router, ExtProcClient.upstreamOf(r),
                        ExtProcClient.rejectionCode(r), took, fresh));
                count.incrementAndGet();
                if (fresh && reuseNewSessions && ExtProcClient.upstreamOf(r) != null) {
                    sessions.add(session);
                }
            } catch (Exception e) {
                results.add(new Result(start, session, router, null, -2, System.nanoTime() - start, fresh));
                count.incrementAndGet();
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** How many requests have completed so far. */
    public long completed() {
        return count.get();
    }

    /**
     * Returns once {@code target} requests have completed. Fails if the driver's own bounds end first, or if no
     * request completes for two request bounds (every request ends within one: answered, or given up by its
     * client), which means the traffic has stalled; so no fixed total wait is needed, however slow the machine.
     */
    public void awaitCompleted(String what, long target) throws InterruptedException {
        long stallNanos = requestBound.multipliedBy(2).toNanos();
        long last = count.get();
        long lastProgress = System.nanoTime();
        while (count.get() < target) {
            long now = System.nanoTime();
            long c = count.get();
            if (c != last) {
                last = c;
                lastProgress = now;
            } else if (now - lastProgress > stallNanos) {
                throw new AssertionError("traffic stalled at " + c + " requests waiting for " + what + " (" + target
                        + "): none completed in " + stallNanos / 1_000_000 + " ms");
            }
            if (now - deadlineNanos > 0 || c >= maxRequests) {
                throw new AssertionError("traffic reached its bound at " + c + " requests before " + what + " ("
                        + target + ")");
            }
            Thread.sleep(10);
        }
    }

    /** Results so far, in completion order. */
    public List<Result> results() {
        return new ArrayList<>(results);
    }

    /** Results of requests started in [fromNanos, toNanos). */
    public List<Result> between(long fromNanos, long toNanos) {
        return results.stream().filter(r -> r.atNanos() >= fromNanos && r.atNanos() < toNanos).toList();
    }

    /** The q-quantile (0..1) of decision latency in milliseconds. */
    public static double percentileMillis(List<Result> rs, double q) {
        if (rs.isEmpty()) {
            return Double.NaN;
        }
        long[] n = rs.stream().mapToLong(Result::nanos).toArray();
        Arrays.sort(n);
        return n[(int) Math.min(n.length - 1, Math.floor(q * n.length))] / 1e6;
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        workers.shutdown();
        // Each loop ends after the request it is in, which its client bounds; then a 1 ms pause.
        if (!workers.awaitTermination(requestBound.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("traffic loops still running " + requestBound.multipliedBy(2).toMillis()
                    + " ms after stop");
        }
    }

    /** Sessions that were routed to more than one replica over the run (by any router): moved sessions. */
    public static java.util.Set<String> movedSessions(List<Result> rs) {
        java.util.Map<String, String> first = new java.util.HashMap<>();
        java.util.Set<String> moved = new java.util.HashSet<>();
        for (Result r : rs) {
            if (r.upstream() != null) {
                String prev = first.putIfAbsent(r.session(), r.upstream());
                if (prev != null && !prev.equals(r.upstream())) {
                    moved.add(r.session());
                }
            }
        }
        return moved;
    }
}
