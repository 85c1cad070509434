package io.scrouter.extproc.ops;

import io.scrouter.extproc.pool.LoadProber;
import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.NearCache;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.extproc.routing.Routing;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.load.ReplicaLoad;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/** Assembles what the admin view and the metrics show from the router's live parts. Read-only. */
public final class RouterStatus {

    private final ServerPool pool;
    private final LoadBoard board;
    private final LoadProber prober;
    private final PoolRefresher refresher;
    private final Routing routing;
    private final LongSupplier clock;
    private volatile boolean draining;

    public RouterStatus(ServerPool pool, LoadBoard board, LoadProber prober, PoolRefresher refresher,
                        Routing routing, LongSupplier clockMillis) {
        this.pool = pool;
        this.board = board;
        this.prober = prober;
        this.refresher = refresher;
        this.routing = routing;
        this.clock = clockMillis;
    }

    /** From now on the router reports not ready: it is stopping. */
    public void startDraining() {
        draining = true;
    }

    public boolean draining() {
        return draining;
    }

    public List<ReplicaView> replicas() {
        long now = clock.getAsLong();
        List<Candidate> all = routing.placement().candidatesNow(pool.snapshot());
        Map<String, Candidate> candidates = all.stream()
                .collect(Collectors.toMap(Candidate::replicaId, c -> c, (a, b) -> a));
        // Scores as the policy sees them at placement time: over the fresh, ready candidates together.
        List<Candidate> offered = all.stream().filter(c -> c.fresh() && pool.snapshot().get(c.replicaId()) != null
                && pool.snapshot().get(c.replicaId()).takesNewSessions()).toList();
        double[] offeredScores = routing.placement().placer().policy().scores(offered);
        Map<String, Double> scores = new HashMap<>();
        for (int i = 0; i < offered.size(); i++) {
            scores.put(offered.get(i).replicaId(), offeredScores[i]);
        }
        List<ReplicaView> out = new ArrayList<>();
        for (Replica r : pool.snapshot().all()) {
            ReplicaLoad load = board.get(r.id());
            Candidate c = candidates.get(r.id());
            double score = scores.getOrDefault(r.id(), Double.NaN);
            out.add(new ReplicaView(r.id(), r.group(), r.grpcAddress(), r.metricsUrl(), r.state().wireName(), load.utilisation(),
                    load.lastUtilisation(), c != null && c.fresh(),
                    load.everSampled() ? load.sampleAgeMillis(now) : -1, load.consecutiveFailures(), load.lastError(),
                    c == null ? 0 : c.activeSessions(), load.placementsSinceSample(), score, prober.failuresOf(r.id())));
        }
        return out;
    }

    /**
     * The replicas by group, in name order: how many, how many take new sessions, their live sessions and the mean
     * smoothed utilisation of the fresh ones, with the group's cap and how often a request of that group found
     * every replica it may use at its cap.
     */
    public List<GroupView> groups() {
        ReplicaGroups groups = routing.placement().groups();
        Map<String, Long> full = groups.fullRefusals();
        Map<String, List<ReplicaView>> byGroup = new TreeMap<>();
        for (ReplicaView v : replicas()) {
            byGroup.computeIfAbsent(v.group(), g -> new ArrayList<>()).add(v);
        }
        for (String requestGroup : full.keySet()) {
            byGroup.putIfAbsent(requestGroup, List.of());
        }
        List<GroupView> out = new ArrayList<>(byGroup.size());
        byGroup.forEach((group, views) -> {
            long ready = views.stream().filter(v -> v.state().equals(ReplicaState.READY.wireName())).count();
            long sessions = views.stream().mapToLong(ReplicaView::activeSessions).sum();
            double utilisation = views.stream().filter(ReplicaView::fresh).mapToDouble(ReplicaView::utilisation)
                    .average().orElse(Double.NaN);
            Long cap = groups.caps().get(group);
            out.add(new GroupView(group, views.size(), ready, sessions, utilisation, cap == null ? -1 : cap,
                    full.getOrDefault(group, 0L)));
        });
        return out;
    }

    public boolean degraded() {
        return routing.placement().isDegraded();
    }

    public boolean storeCircuitOpen() {
        return routing.store().breakerOpen();
    }

    public String poolError() {
        return refresher.lastError();
    }

    public long poolReadAgeMillis() {
        long last = refresher.lastSuccessMillis();
        return last == Long.MIN_VALUE ? -1 : Math.max(0, clock.getAsLong() - last);
    }

    public String policy() {
        return routing.placement().placer().policy().name();
    }

    /** The sessions this router holds in memory. */
    public NearCache nearCache() {
        return routing.nearCache();
    }
}
