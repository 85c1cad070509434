package io.scrouter.loadtest.replay;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.loadtest.bench.Latencies;
import io.scrouter.loadtest.trace.Replay;
import io.scrouter.loadtest.trace.TraceEvent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Plays a trace against a running ext_proc service the way Envoy would present the traffic: every Spark
 * Connect RPC of the trace becomes one {@code Process} stream, sent asynchronously so thousands can be in
 * flight. Requests of one session go in order (a client's calls on one session are sequential); sessions
 * run concurrently. Where the service routes a query's {@code ExecutePlan}, that simulated replica runs the
 * query's tasks, so the service's later probes see the load its own placements created.
 */
public final class ServiceReplay {

    private static final CompletableFuture<Void> IDLE = CompletableFuture.completedFuture(null);

    private final ExtProcClient calls;
    private final SimulatedReplicas replicas;
    private final double speed;
    private final Map<String, CompletableFuture<Void>> lanes = new HashMap<>();
    private final Map<String, LiveReplica> homeOf = new ConcurrentHashMap<>();
    private ReplayStats stats;
    private long startNanos;
    private long maxLagMillis;

    public ServiceReplay(ExtProcClient calls, SimulatedReplicas replicas, double speed) {
        this.calls = calls;
        this.replicas = replicas;
        this.speed = speed;
    }

    /**
     * Plays the trace in real time at the speed factor, then waits up to {@code drainMillis} for the last
     * requests to be answered and the last queries to finish. Queries still running then stay unfinished.
     */
    public ReplayStats run(List<TraceEvent> trace, long drainMillis) throws InterruptedException {
        int requests = trace.stream().mapToInt(e -> e instanceof TraceEvent.Query q ? q.rpcs().size() : 1).sum();
        stats = new ReplayStats(requests);
        long traceMillis = trace.isEmpty() ? 0 : trace.get(trace.size() - 1).atMillis();
        // About 200 looks over the run, never more often than every 50 ms of wall time.
        long sampleEveryMillis = Math.max(50, (long) (traceMillis / speed / 200));
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        startNanos = System.nanoTime();
        sampler.scheduleAtFixedRate(this::sample, 0, sampleEveryMillis, TimeUnit.MILLISECONDS);
        try {
            Replay replay = new Replay(speed);
            replay.play(trace, this::dispatch);
            maxLagMillis = replay.maxLagMillis();
            awaitDrained(drainMillis);
            sample();
        } finally {
            sampler.shutdownNow();
        }
        return stats;
    }

    public long maxLagMillis() {
        return maxLagMillis;
    }

    /** Chains the event behind the previous one of its session; runs on the replay thread, never blocks. */
    private void dispatch(TraceEvent e) {
        CompletableFuture<Void> tail = lanes.getOrDefault(e.session(), IDLE);
        lanes.put(e.session(), tail.thenCompose(x -> handle(e)));
    }

    private CompletableFuture<Void> handle(TraceEvent e) {
        if (e instanceof TraceEvent.SessionStart) {
            return route("Config", e.session(), true).thenAccept(r -> { });
        }
        if (e instanceof TraceEvent.Query q) {
            CompletableFuture<Void> chain = IDLE;
            boolean hasExecute = q.rpcs().contains("ExecutePlan");
            for (int i = 0; i < q.rpcs().size(); i++) {
                String rpc = q.rpcs().get(i);
                boolean runsQuery = rpc.equals("ExecutePlan") || (!hasExecute && i == q.rpcs().size() - 1);
                chain = chain.thenCompose(x -> route(rpc, q.session(), false)).thenAccept(replica -> {
                    if (runsQuery && replica != null) {
                        run(q, replica);
                    }
                });
            }
            return chain;
        }
        return route("ReleaseSession", e.session(), false).thenAccept(replica -> {
            LiveReplica home = homeOf.remove(e.session());
            if (home != null) {
                home.sessionEnded();
            }
        });
    }

    /** Sends one request; completes with the simulated replica it was routed to, or null if none. */
    private CompletableFuture<LiveReplica> route(String rpc, String session, boolean newSession) {
        CompletableFuture<LiveReplica> routed = new CompletableFuture<>();
        Latencies decisions = newSession ? stats.newSessionDecisions : stats.knownSessionDecisions;
        long sent = System.nanoTime();
        calls.sendAsync(ExtProcClient.sparkCall(rpc, session)).whenComplete((response, error) -> {
            decisions.add(System.nanoTime() - sent);
            routed.complete(error != null ? transportError() : routedTo(session, response));
        });
        return routed;
    }

    private LiveReplica transportError() {
        stats.transportErrors.incrementAndGet();
        return null;
    }

    private LiveReplica routedTo(String session, ProcessingResponse response) {
        if (response.hasImmediateResponse()) {
            stats.rejected(ExtProcClient.rejectionCode(response));
            return null;
        }
        LiveReplica replica = replicas.at(ExtProcClient.upstreamOf(response));
        if (replica == null) {
            stats.routedOutsidePool.incrementAndGet();
            return null;
        }
        LiveReplica home = homeOf.putIfAbsent(session, replica);
        if (home == null) {
            // The session's first routed request: this is where the service placed it.
            replica.sessionPlaced();
            stats.placed(replica.id());
        } else if (home != replica) {
            stats.routedElsewhere.incrementAndGet();
        }
        return replica;
    }

    private void run(TraceEvent.Query q, LiveReplica replica) {
        double aloneNanos = q.aloneMillis(replica.slots()) * 1_000_000.0 / speed;
        long submitted = System.nanoTime();
        stats.queriesSubmitted.incrementAndGet();
        replica.submit(q.tasks(), (long) (q.taskMillis() * 1_000_000.0 / speed),
                finishedAt -> stats.queryFinished((finishedAt - submitted) / aloneNanos));
    }

    private void awaitDrained(long drainMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(drainMillis);
        try {
            CompletableFuture.allOf(new ArrayList<>(lanes.values()).toArray(CompletableFuture[]::new))
                    .get(drainMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            return;
        }
        while (System.nanoTime() < deadline && stats.queriesFinished.get() < stats.queriesSubmitted()) {
            Thread.sleep(20);
        }
    }

    private void sample() {
        List<LiveReplica> all = List.copyOf(replicas.all());
        int[] sessions = new int[all.size()];
        double[] demand = new double[all.size()];
        for (int i = 0; i < all.size(); i++) {
            sessions[i] = all.get(i).sessions();
            demand[i] = all.get(i).sample().utilisation();
        }
        double traceSeconds = (System.nanoTime() - startNanos) / 1e9 * speed;
        stats.sample(new ReplayStats.Sample(traceSeconds, sessions, demand));
    }
}
