package io.scrouter.loadtest.sim;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.extproc.routing.SessionCounts;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.load.ReplicaLoad;
import io.scrouter.scorer.smoothing.Ewma;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * One router instance in the simulation: its own {@link LoadBoard} fed by its own probes, its own
 * {@link SessionCounts} over the shared store, its own view of the pool, and its own placement rule. This
 * is where several routers disagree: each sees the load as of its last probe, and the others' placements
 * only once the shared count catches up. Candidates are built by {@link ReplicaLoad#candidate}, as the
 * service builds them, and replica groups are applied by the service's own {@link ReplicaGroups#placeInOrder}.
 */
final class SimRouter {

    private final LoadBoard board;
    private final SessionCounts counts;
    private final PlacementRule rule;
    private final RandomGenerator random;
    private final ReplicaGroups groups;
    private final Function<String, String> groupOf;
    /** Replica id → draining, in pool order. */
    private final Map<String, Boolean> view = new LinkedHashMap<>();
    /** Each replica as the groups see it (id and group; its address is never dialled). */
    private final Map<String, Replica> asReplica = new HashMap<>();

    SimRouter(Ewma ewma, long staleAfterMillis, long sustainMillis, long recentWindowMillis, SharedStore store,
              PlacementRule rule, RandomGenerator random, ReplicaGroups groups, Function<String, String> groupOf) {
        this.board = new LoadBoard(ewma, staleAfterMillis, sustainMillis);
        this.counts = new SessionCounts(store, recentWindowMillis);
        this.rule = rule;
        this.random = random;
        this.groups = groups;
        this.groupOf = groupOf;
    }

    /** The pool as this router last read it; replicas that left are forgotten, as the prober does. */
    void poolRead(Map<String, Boolean> published) {
        view.clear();
        view.putAll(published);
        board.retainOnly(view.keySet());
    }

    Iterable<String> view() {
        return List.copyOf(view.keySet());
    }

    void probeAnswered(String replicaId, LoadSample sample, long atMillis) {
        if (view.containsKey(replicaId)) {
            board.recordSample(replicaId, sample, atMillis);
        }
    }

    void probeFailed(String replicaId) {
        if (view.containsKey(replicaId)) {
            board.recordFailure(replicaId, "probe timed out");
        }
    }

    void refreshCounts() {
        counts.refresh(List.copyOf(view.keySet()), 3_600_000);
    }

    /**
     * Places a new session as the service does ({@code PlacementProposer.propose}): the ready replicas its access
     * allows, group by group in fallback order and below the group's cap by this router's session counts; among
     * them, candidates from board and counts, then the rule; then note it. Null when nothing was placed.
     */
    String place(String session, ReplicaGroups.Access access, long now) {
        List<Replica> ready = new ArrayList<>(view.size());
        for (Map.Entry<String, Boolean> e : view.entrySet()) {
            if (e.getValue()) {
                continue; // draining: keeps its sessions, takes no new ones
            }
            ready.add(asReplica.computeIfAbsent(e.getKey(), id -> new Replica(id, "127.0.0.1:15002", null,
                    ReplicaState.READY, null, groupOf.apply(id))));
        }
        String chosen = groups.placeInOrder(access, ready, r -> counts.get(r.id()), false,
                open -> rule.place(session, candidates(open, now), random));
        if (chosen != null) {
            board.notePlacement(chosen);
            counts.noteBound(chosen);
        }
        return chosen;
    }

    private List<Candidate> candidates(List<Replica> replicas, long now) {
        List<Candidate> out = new ArrayList<>(replicas.size());
        for (Replica r : replicas) {
            ReplicaLoad load = board.get(r.id());
            out.add(load.candidate(r.id(), load.isFresh(now, board.staleAfterMillis()), counts.get(r.id()),
                    counts.recent(r.id())));
        }
        return out;
    }
}
