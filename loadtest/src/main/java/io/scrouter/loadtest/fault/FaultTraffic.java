package io.scrouter.loadtest.fault;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.loadtest.traffic.TrafficDriver.Result;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Envoy-like traffic for the minutes-long fault runs, recording every request as extproc's
 * {@code TrafficDriver.Result}. Differs from that fixture where length matters: the request bound is an
 * atomic counter (not a walk over all results on every request), and each loop keeps its own sessions, so
 * adding a new session costs O(1). Each loop has long-lived sessions and opens a new one every
 * {@code newEvery} requests, which it keeps using; every request goes to a random router, as Envoy balances
 * its ext_proc cluster. Bounded in time and count; loopback only.
 */
final class FaultTraffic implements AutoCloseable {

    private static final String[] METHODS = {"ExecutePlan", "AnalyzePlan", "Config", "ReattachExecute",
            "ReleaseExecute"};
    /**
     * A session's first call: one that may bind it. The last of {@link #METHODS}, {@code ReleaseExecute}, only
     * cleans up after an operation and never binds (extproc's {@code RpcKind.CLEANUP}): a real client never opens a
     * session with it, and the router answers it on an unknown session with {@code NOT_FOUND}, which the fault runs
     * count as a refusal.
     */
    private static final int FIRST_CALLS = METHODS.length - 1;

    private final List<ExtProcClient> routers;
    private final ConcurrentLinkedQueue<Result> results = new ConcurrentLinkedQueue<>();
    private final Set<String> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final ExecutorService workers;
    private final long deadlineNanos;
    private final long maxRequests;
    private final long startNanos = System.nanoTime();

    FaultTraffic(List<ExtProcClient> routers, int threads, int longLivedPerThread, int newEvery, long maxSeconds,
                 long maxRequests) {
        this.routers = routers;
        this.deadlineNanos = startNanos + TimeUnit.SECONDS.toNanos(maxSeconds);
        this.maxRequests = maxRequests;
        this.workers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "fault-traffic");
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < threads; i++) {
            workers.submit(() -> loop(longLivedPerThread, newEvery));
        }
    }

    private void loop(int longLived, int newEvery) {
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < longLived; i++) {
            mine.add(UUID.randomUUID().toString());
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (!stop.get() && System.nanoTime() < deadlineNanos && sent.incrementAndGet() <= maxRequests) {
            boolean fresh = random.nextInt(newEvery) == 0;
            String session = fresh ? UUID.randomUUID().toString() : mine.get(random.nextInt(mine.size()));
            int router = random.nextInt(routers.size());
            long start = System.nanoTime();
            try {
                // A long-lived session is opened on its first use too: until then no router has it.
                boolean opening = fresh || !sessions.contains(session);
                ProcessingResponse r = routers.get(router).send(ExtProcClient.sparkCall(
                        METHODS[random.nextInt(opening ? FIRST_CALLS : METHODS.length)], session));
                String upstream = ExtProcClient.upstreamOf(r);
                results.add(new Result(start, session, router, upstream, ExtProcClient.rejectionCode(r),
                        System.nanoTime() - start, fresh));
                if (fresh && upstream != null) {
                    mine.add(session);
                }
                if (upstream != null) {
                    sessions.add(session);
                }
            } catch (Exception e) {
                results.add(new Result(start, session, router, null, Figures.TRANSPORT_ERROR,
                        System.nanoTime() - start, fresh));
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    long startNanos() {
        return startNanos;
    }

    long sent() {
        return sent.get();
    }

    /** Every session that has been routed at least once. */
    Set<String> sessions() {
        return Set.copyOf(sessions);
    }

    /** All results so far (a copy; call it at analysis time, not in a loop). */
    List<Result> results() {
        return new ArrayList<>(results);
    }

    static List<Result> between(List<Result> all, long fromNanos, long toNanos) {
        return all.stream().filter(r -> r.atNanos() >= fromNanos && r.atNanos() < toNanos).toList();
    }

    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        workers.shutdown();
        workers.awaitTermination(20, TimeUnit.SECONDS);
    }
}
