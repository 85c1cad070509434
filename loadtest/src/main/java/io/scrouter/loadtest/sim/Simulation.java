package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.trace.Scenario;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.smoothing.Ewma;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;

/**
 * A discrete-event simulation of routers placing a trace's sessions on replicas.
 *
 * <p>What is modelled, because it is what makes placement hard: replicas run tasks in a fixed number of
 * slots with a FIFO queue; each router learns a replica's load only by probing it once per poll interval
 * (the sample arrives {@link #PROBE_LATENCY_MS} later and a dead replica's probe times out after
 * {@link #PROBE_TIMEOUT_MS}); each router has its own board, its own pool view (a dead replica stays
 * published until its registration expires, {@link #PUBLISH_TTL_MS}), and reads the shared session counts
 * with a delay. What is not modelled: network time of requests, the decision path's own latency.
 *
 * <p>The placement itself is the real code: {@code LoadBoard}, {@code Ewma}, {@code Placer}, the policies,
 * the service's {@code SessionCounts} and in-memory store. Single-threaded and deterministic for a seed.
 */
public final class Simulation implements ReplicaQueue.Listener {

    static final long PROBE_LATENCY_MS = 20;
    static final long PROBE_TIMEOUT_MS = 1_000;
    static final long PUBLISH_TTL_MS = 10_000;
    static final long STALE_AFTER_MS = 5_000;
    static final double EWMA_ALPHA = 0.5;

    private record Scheduled(long at, long seq, Runnable action) {
    }

    private static final class SimSession {
        final SimRouter router;
        String replica;

        SimSession(SimRouter router, String replica) {
            this.router = router;
            this.replica = replica;
        }
    }

    private final Scenario scenario;
    private final List<TraceEvent> trace;
    private final Contender contender;
    private final long seed;
    private final PriorityQueue<Scheduled> queue = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private final Map<String, ReplicaQueue> replicas = new LinkedHashMap<>();
    private final List<String> published = new ArrayList<>();
    private final Map<String, SimSession> sessions = new HashMap<>();
    private final List<SimRouter> routers = new ArrayList<>();
    private final SharedStore store;
    private long now;
    private long seq;
    private int nextReplica;
    private long failed;
    private double[] slowdowns = new double[1 << 16];
    private int completed;
    private int[] snapshot = new int[0];

    public Simulation(Scenario scenario, List<TraceEvent> trace, Contender contender, long seed) {
        this.scenario = scenario;
        this.trace = trace;
        this.contender = contender;
        this.seed = seed;
        this.store = new SharedStore(() -> now, this::at, scenario.cluster().storeDelayMillis());
    }

    /** Runs to the end of the trace and until every query has finished. */
    public SimResult run(LongConsumer traceEventsDone) {
        Scenario.Cluster cluster = scenario.cluster();
        for (int i = 0; i < cluster.replicas(); i++) {
            addReplica();
        }
        Contender.Context ctx = new Contender.Context(id -> {
            ReplicaQueue r = replicas.get(id);
            return r == null || !r.alive() ? Double.POSITIVE_INFINITY : r.utilisation();
        });
        Ewma ewma = new Ewma(EWMA_ALPHA, cluster.pollMillis());
        SplittableRandom phases = new SplittableRandom(seed);
        for (int i = 0; i < cluster.routers(); i++) {
            SimRouter router = new SimRouter(ewma, STALE_AFTER_MS, store, contender.perRouter().apply(ctx),
                    new SplittableRandom(seed * 1_000_003L + i));
            routers.add(router);
            tick(router);
            long phase = phases.nextLong(cluster.pollMillis());
            at(phase, () -> periodic(router));
        }
        for (Scenario.Change change : cluster.changes()) {
            at(change.atMillis(), () -> apply(change));
        }
        at(scenario.snapshotAtMillis(), this::takeSnapshot);

        int next = 0;
        int sinceReport = 0;
        while (next < trace.size() || !queue.isEmpty()) {
            boolean traceFirst = next < trace.size()
                    && (queue.isEmpty() || trace.get(next).atMillis() <= queue.peek().at);
            if (traceFirst) {
                TraceEvent e = trace.get(next++);
                now = e.atMillis();
                handle(e);
                if (++sinceReport == 1_000) {
                    traceEventsDone.accept(sinceReport);
                    sinceReport = 0;
                }
            } else {
                Scheduled s = queue.poll();
                now = s.at;
                s.action.run();
            }
        }
        traceEventsDone.accept(sinceReport);
        double[] done = Arrays.copyOf(slowdowns, completed);
        Arrays.sort(done);
        double[] util = replicas.values().stream().mapToDouble(r -> r.meanUtilisation(now)).toArray();
        return new SimResult(scenario.name(), contender.name(), done, failed, util, snapshot);
    }

    private void at(long when, Runnable action) {
        queue.add(new Scheduled(when, seq++, action));
    }

    private void addReplica() {
        String id = "r" + nextReplica++;
        replicas.put(id, new ReplicaQueue(id, scenario.cluster().slots(), now, this));
        published.add(id);
    }

    /** One poll interval of one router: re-read the pool and the session counts, probe every replica. */
    private void periodic(SimRouter router) {
        tick(router);
        if (now < scenario.durationMillis()) {
            at(now + scenario.cluster().pollMillis(), () -> periodic(router));
        }
    }

    private void tick(SimRouter router) {
        router.poolRead(published);
        router.refreshCounts();
        for (String id : router.view()) {
            ReplicaQueue r = replicas.get(id);
            if (r.alive()) {
                LoadSample sample = r.sample();
                at(now + PROBE_LATENCY_MS, () -> router.probeAnswered(id, sample, now));
            } else {
                at(now + PROBE_TIMEOUT_MS, () -> router.probeFailed(id));
            }
        }
    }

    private void apply(Scenario.Change change) {
        int toFail = change.fail();
        for (ReplicaQueue r : replicas.values()) {
            if (toFail == 0) {
                break;
            }
            if (r.alive()) {
                failed += r.fail(now);
                toFail--;
                // The controller stops renewing its registration; routers see it leave when that expires.
                at(now + PUBLISH_TTL_MS, () -> published.remove(r.id()));
            }
        }
        for (int i = 0; i < change.join(); i++) {
            addReplica();
        }
    }

    private void handle(TraceEvent e) {
        if (e instanceof TraceEvent.SessionStart start) {
            SimRouter router = routers.get(start.router() % routers.size());
            SimSession s = new SimSession(router, null);
            sessions.put(start.session(), s);
            bind(start.session(), s);
        } else if (e instanceof TraceEvent.Query q) {
            SimSession s = sessions.get(q.session());
            ReplicaQueue r = s == null || s.replica == null ? null : replicas.get(s.replica);
            if (r == null || !r.alive()) {
                // The client gets an error; its state is gone, so it opens a new session on its next try.
                failed++;
                if (s != null) {
                    if (s.replica != null) {
                        store.release(q.session(), s.replica);
                    }
                    bind(q.session(), s);
                }
                return;
            }
            r.submit(new Job(q.session(), now, q.tasks(), q.taskMillis(), q.aloneMillis(r.slots())), now);
        } else {
            SimSession s = sessions.remove(e.session());
            if (s != null && s.replica != null) {
                store.release(e.session(), s.replica);
            }
        }
    }

    private void bind(String session, SimSession s) {
        String chosen = s.router.place(session, now);
        s.replica = chosen;
        if (chosen != null) {
            store.bindIfAbsent(session, chosen);
        }
    }

    private void takeSnapshot() {
        Map<String, Integer> perReplica = new LinkedHashMap<>();
        replicas.values().stream().filter(ReplicaQueue::alive).forEach(r -> perReplica.put(r.id(), 0));
        for (SimSession s : sessions.values()) {
            if (s.replica != null) {
                perReplica.computeIfPresent(s.replica, (k, v) -> v + 1);
            }
        }
        snapshot = perReplica.values().stream().sorted((a, b) -> b - a).mapToInt(Integer::intValue).toArray();
    }

    @Override
    public void taskStarted(ReplicaQueue replica, Job job, long endsAtMillis) {
        at(endsAtMillis, () -> replica.taskEnded(job, endsAtMillis));
    }

    @Override
    public void jobFinished(ReplicaQueue replica, Job job, long atMillis) {
        if (completed == slowdowns.length) {
            slowdowns = Arrays.copyOf(slowdowns, completed * 2);
        }
        slowdowns[completed++] = (double) (atMillis - job.arrivedAtMillis) / job.aloneMillis;
    }
}
