package io.scrouter.loadtest.sim;

import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.SessionPlan;
import io.scrouter.loadtest.workload.Workload;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.smoothing.Ewma;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.LongConsumer;

/**
 * A discrete-event simulation of routers placing a workload's sessions on replicas.
 *
 * <p>What is modelled, because it is what makes placement hard: replicas run tasks in a fixed number of
 * slots with a FIFO queue; users wait for each result and think before the next query (closed loop), or
 * send on a schedule (open loop); each router learns a replica's load only by probing it (Spark's figures
 * are {@code metricsLag} old when read, the answer takes {@code probeLatency}, a dead replica's probe times
 * out); each router has its own board and pool view (a failed replica stays published until its
 * registration expires) and reads the shared session counts once per pool poll, with a delay. Not modelled:
 * network time of requests and the decision path's own latency.
 *
 * <p>The placement itself is the real code: {@code LoadBoard}, {@code Ewma}, {@code Placer}, the policies,
 * the service's {@code SessionCounts} and in-memory store, and its {@link ReplicaGroups} when the scenario has
 * a {@code cluster.groups} section. Single-threaded and deterministic for a seed.
 */
public final class Simulation {

    /**
     * A running query's client sends a request this often: Spark Connect's server ends a reattachable
     * ExecutePlan response stream after {@code spark.connect.execute.reattachable.senderMaxStreamDuration}
     * (default 2 min; apache/spark, sql/connect/server/.../config/Connect.scala) and the client continues with a
     * ReattachExecute, which the router sees like any request of the session.
     */
    static final long REATTACH_EVERY_MILLIS = 120_000;

    private static final class Scheduled {
        final long at;
        final long seq;
        final Runnable action;

        Scheduled(long at, long seq, Runnable action) {
            this.at = at;
            this.seq = seq;
            this.action = action;
        }
    }

    /** What one team's sessions met, as the run goes (see {@link SimResult.Team}). */
    private static final class TeamTally {
        double[] slowdowns = new double[1 << 10];
        int completed;
        long failed;
        long sent;
        long refused;
        final Map<String, Long> placedOn = new TreeMap<>();

        SimResult.Team result() {
            double[] done = Arrays.copyOf(slowdowns, completed);
            Arrays.sort(done);
            return new SimResult.Team(done, failed, sent, Map.copyOf(placedOn), refused);
        }
    }

    private static final class SimSession {
        final int index;
        final SessionPlan plan;
        final SimRouter router;
        final long endsAtMillis;
        /** The replica groups it may be placed on, in fallback order, as its router resolves its group header. */
        final ReplicaGroups.Access access;
        /** Its team's figures; null without teams. */
        final TeamTally team;
        String replica;
        int inFlight;
        boolean ended;
        /** When the session's router last pushed its idle timer to the store (its near-cache entry's clock). */
        long pushedAt;

        SimSession(int index, SessionPlan plan, SimRouter router, long endsAtMillis, ReplicaGroups.Access access,
                   TeamTally team) {
            this.index = index;
            this.plan = plan;
            this.router = router;
            this.endsAtMillis = endsAtMillis;
            this.access = access;
            this.team = team;
        }
    }

    private final ScenarioSpec spec;
    private final Workload workload;
    private final Contender contender;
    private final long seed;
    private final boolean closedLoop;
    private final int referenceSlots;
    private final PriorityQueue<Scheduled> queue = new PriorityQueue<>(
            (a, b) -> a.at != b.at ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private final Map<String, ReplicaQueue> replicas = new LinkedHashMap<>();
    /** Published replicas, id → draining, in pool order. */
    private final Map<String, Boolean> published = new LinkedHashMap<>();
    /** Replica id → its group (a replica keeps its group for life). */
    private final Map<String, String> groupOf = new LinkedHashMap<>();
    private final ReplicaGroups groups;
    /** Team name → its figures, in the scenario's order; empty without teams. */
    private final Map<String, TeamTally> teams = new LinkedHashMap<>();
    private final SimSession[] sessions;
    private final List<SimRouter> routers = new ArrayList<>();
    private final SharedStore store;
    private long now;
    private long seq;
    private int nextReplica;
    private long failed;
    private long sent;
    private double[] slowdowns = new double[1 << 14];
    private int completed;
    private int[] snapshot = new int[0];
    private int arrivedSinceReport;

    public Simulation(ScenarioSpec spec, Workload workload, Contender contender, long seed) {
        this.spec = spec;
        this.workload = workload;
        this.contender = contender;
        this.seed = seed;
        this.closedLoop = spec.clients().loop() == ScenarioSpec.Loop.CLOSED;
        this.referenceSlots = spec.referenceSlots();
        this.sessions = new SimSession[workload.arrivals().size()];
        this.store = new SharedStore(() -> now, this::at, spec.cluster().storeDelayMillis());
        this.groups = ReplicaGroups.from(spec.cluster().groups());
        spec.teams().forEach(t -> teams.put(t.name(), new TeamTally()));
    }

    /** Runs until every session has ended and every query has finished; reports arrivals as they happen. */
    public SimResult run(LongConsumer arrivalsDone) {
        ScenarioSpec.Cluster cluster = spec.cluster();
        cluster.replicas().forEach(this::addReplica);
        Contender.Context ctx = new Contender.Context(id -> {
            ReplicaQueue r = replicas.get(id);
            return r == null || !r.alive() ? Double.POSITIVE_INFINITY : r.utilisation(now);
        });
        Ewma ewma = new Ewma(cluster.ewmaAlpha(), cluster.probeIntervalMillis());
        SplittableRandom phases = new SplittableRandom(seed ^ 0x5DEECE66DL);
        for (int i = 0; i < cluster.routers(); i++) {
            SimRouter router = new SimRouter(ewma, cluster.staleAfterMillis(), cluster.sustainMillis(),
                    cluster.recentWindowMillis(), store, contender.perRouter().apply(ctx),
                    new SplittableRandom(seed * 1_000_003L + i), groups, groupOf::get);
            routers.add(router);
            pollPool(router);
            probe(router);
            at(phases.nextLong(cluster.poolPollMillis()), () -> pollLoop(router));
            at(phases.nextLong(cluster.probeIntervalMillis()), () -> probeLoop(router));
        }
        for (ScenarioSpec.Change change : cluster.changes()) {
            at(change.atMillis(), () -> apply(change));
        }
        at(spec.snapshotAtMillis(), this::takeSnapshot);
        for (Workload.Arrival a : workload.arrivals()) {
            at(a.atMillis(), () -> arrive(a.index()));
        }
        while (!queue.isEmpty()) {
            Scheduled s = queue.poll();
            now = s.at;
            s.action.run();
            if (arrivedSinceReport == 100) {
                arrivalsDone.accept(arrivedSinceReport);
                arrivedSinceReport = 0;
            }
        }
        arrivalsDone.accept(arrivedSinceReport);
        double[] done = Arrays.copyOf(slowdowns, completed);
        Arrays.sort(done);
        double[] util = replicas.values().stream().mapToDouble(r -> r.meanUtilisation(now)).toArray();
        Map<String, SimResult.Team> byTeam = new LinkedHashMap<>();
        teams.forEach((name, tally) -> byTeam.put(name, tally.result()));
        return new SimResult(spec.name(), contender.name(), done, failed, sent, util, snapshot, byTeam);
    }

    private void at(long when, Runnable action) {
        queue.add(new Scheduled(when, seq++, action));
    }

    private void addReplica(int slots) {
        String id = "r" + nextReplica;
        groupOf.put(id, spec.cluster().groupOf(nextReplica++));
        replicas.put(id, new ReplicaQueue(id, slots, now));
        published.put(id, false);
    }

    private void pollLoop(SimRouter router) {
        pollPool(router);
        if (now < spec.durationMillis()) {
            at(now + spec.cluster().poolPollMillis(), () -> pollLoop(router));
        }
    }

    private void pollPool(SimRouter router) {
        router.poolRead(published);
        router.refreshCounts();
    }

    private void probeLoop(SimRouter router) {
        probe(router);
        if (now < spec.durationMillis()) {
            at(now + spec.cluster().probeIntervalMillis(), () -> probeLoop(router));
        }
    }

    /**
     * Probes every replica in the router's view; Spark's figures are metricsLag old when they arrive. The
     * answers of one round arrive together (one event), as they would from parallel probes of equal latency.
     */
    private void probe(SimRouter router) {
        ScenarioSpec.Cluster c = spec.cluster();
        List<String> ids = new ArrayList<>();
        List<LoadSample> samples = new ArrayList<>();
        for (String id : router.view()) {
            ReplicaQueue r = replicas.get(id);
            if (r.alive()) {
                ids.add(id);
                samples.add(r.sample(now));
            } else {
                at(now + c.probeTimeoutMillis(), () -> router.probeFailed(id));
            }
        }
        long arrives = now + c.metricsLagMillis() + c.probeLatencyMillis();
        at(arrives, () -> {
            for (int i = 0; i < ids.size(); i++) {
                router.probeAnswered(ids.get(i), samples.get(i), arrives);
            }
        });
    }

    private void apply(ScenarioSpec.Change change) {
        int toFail = change.fail();
        int toDrain = change.drain();
        for (ReplicaQueue r : List.copyOf(replicas.values())) {
            if (!r.alive()) {
                continue;
            }
            if (toFail > 0) {
                toFail--;
                for (Job lost : r.fail(now)) {
                    lost.lost = true;
                    SimSession s = sessions[lost.session];
                    s.inFlight--;
                    failed(s, lost.submittedAtMillis);
                }
                // The controller stops renewing its registration; routers see it leave when that expires.
                at(now + spec.cluster().publishTtlMillis(), () -> published.remove(r.id()));
            } else if (toDrain > 0 && !published.getOrDefault(r.id(), true)) {
                toDrain--;
                published.put(r.id(), true);
            }
        }
        change.join().forEach(this::addReplica);
    }

    private void arrive(int index) {
        SessionPlan plan = workload.session(index);
        SimSession s = new SimSession(index, plan, routers.get(plan.router() % routers.size()),
                Math.min(now + plan.lifetimeMillis(), spec.durationMillis()), accessOf(plan.team()),
                plan.team() == null ? null : teams.get(plan.team()));
        sessions[index] = s;
        bind(s);
        at(now + plan.firstQueryDelayMillis(), () -> query(s));
        arrivedSinceReport++;
    }

    private void query(SimSession s) {
        if (s.ended) {
            return;
        }
        if (now >= s.endsAtMillis) {
            if (s.inFlight == 0) {
                end(s);
            }
            return;
        }
        SessionPlan.Query q = s.plan.nextQuery();
        if (!closedLoop) {
            at(now + s.plan.nextThinkMillis(), () -> query(s));
        }
        ReplicaQueue r = s.replica == null ? null : replicas.get(s.replica);
        if (now >= spec.warmupMillis()) {
            sent++;
            if (s.team != null) {
                s.team.sent++;
            }
        }
        if (r == null || !r.alive()) {
            failed(s, now);
            return;
        }
        s.inFlight++;
        keepAlive(s);
        Job job = new Job(s.index, now, q.tasks(), q.taskMillis(), q.aloneMillis(referenceSlots));
        long done = r.submit(job, now);
        at(done, () -> jobDone(r, job));
        for (long t = now + REATTACH_EVERY_MILLIS; t < done; t += REATTACH_EVERY_MILLIS) {
            at(t, () -> {
                if (!job.lost && !s.ended) {
                    keepAlive(s);
                }
            });
        }
    }

    /**
     * A request of {@code s} reaches its router, which pushes the session's idle timer to the store at most once
     * per {@code refreshEvery}, as the service's router does ({@code SessionRouter.keepAlive}).
     */
    private void keepAlive(SimSession s) {
        if (s.replica != null && now - s.pushedAt >= spec.cluster().refreshEveryMillis()) {
            s.pushedAt = now;
            store.touch(s.plan.id(), s.replica);
        }
    }

    /**
     * A query of {@code s} failed with its replica (or found none): the client gets an error, the session's
     * state is gone, so it starts a new session, and the user tries again after a think time.
     */
    private void failed(SimSession s, long submittedAt) {
        if (submittedAt >= spec.warmupMillis()) {
            failed++;
            if (s.team != null) {
                s.team.failed++;
            }
        }
        ReplicaQueue held = s.replica == null ? null : replicas.get(s.replica);
        if (held == null || !held.alive()) {
            if (s.replica != null) {
                store.release(s.plan.id(), s.replica);
            }
            bind(s);
        }
        if (closedLoop && !s.ended) {
            at(now + s.plan.nextThinkMillis(), () -> query(s));
        } else if (!closedLoop && s.inFlight == 0 && now >= s.endsAtMillis && !s.ended) {
            end(s);
        }
    }

    private void end(SimSession s) {
        s.ended = true;
        if (s.replica != null) {
            store.release(s.plan.id(), s.replica);
        }
    }

    private void bind(SimSession s) {
        String chosen = s.router.place(s.plan.id(), s.access, now);
        s.replica = chosen;
        s.pushedAt = now;
        if (chosen != null) {
            store.bindIfAbsent(s.plan.id(), chosen);
        }
        if (s.team != null) {
            if (chosen == null) {
                s.team.refused++;
            } else {
                s.team.placedOn.merge(groupOf.get(chosen), 1L, Long::sum);
            }
        }
    }

    /**
     * The access a router resolves for a request of {@code team} ({@code ReplicaGroups.resolve}): the team's
     * allowed replica groups, or the {@code withoutGroup} group's for a session without a team. The scenario was
     * checked to name every team in {@code groups.allow}, so no session is refused for its group here.
     */
    private ReplicaGroups.Access accessOf(String team) {
        Optional<RouterConfig.Groups> config = spec.cluster().groups();
        if (config.isEmpty()) {
            return new ReplicaGroups.Access(null, null);
        }
        String group = team != null ? team : config.get().withoutGroup().orElseThrow();
        return new ReplicaGroups.Access(group, config.get().allow().get(group));
    }

    private void takeSnapshot() {
        Map<String, Integer> perReplica = new LinkedHashMap<>();
        replicas.values().stream().filter(ReplicaQueue::alive).forEach(r -> perReplica.put(r.id(), 0));
        for (SimSession s : sessions) {
            if (s != null && !s.ended && s.replica != null) {
                perReplica.computeIfPresent(s.replica, (k, v) -> v + 1);
            }
        }
        snapshot = perReplica.values().stream().sorted((a, b) -> b - a).mapToInt(Integer::intValue).toArray();
    }

    private void jobDone(ReplicaQueue replica, Job job) {
        if (job.lost) {
            return;
        }
        replica.finished(job);
        long atMillis = now;
        SimSession s = sessions[job.session];
        s.inFlight--;
        if (job.submittedAtMillis >= spec.warmupMillis()) {
            if (completed == slowdowns.length) {
                slowdowns = Arrays.copyOf(slowdowns, completed * 2);
            }
            double slowdown = (double) (atMillis - job.submittedAtMillis) / job.aloneMillis;
            slowdowns[completed++] = slowdown;
            if (s.team != null) {
                TeamTally t = s.team;
                if (t.completed == t.slowdowns.length) {
                    t.slowdowns = Arrays.copyOf(t.slowdowns, t.completed * 2);
                }
                t.slowdowns[t.completed++] = slowdown;
            }
        }
        if (closedLoop) {
            at(atMillis + s.plan.nextThinkMillis(), () -> query(s));
        } else if (s.inFlight == 0 && atMillis >= s.endsAtMillis) {
            end(s);
        }
    }
}
