package io.scrouter.loadtest.sim;

import io.scrouter.extproc.routing.SessionCounts;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.load.ReplicaLoad;
import io.scrouter.scorer.smoothing.Ewma;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * One router instance in the simulation: its own {@link LoadBoard} fed by its own probes, its own
 * {@link SessionCounts} over the shared store, its own view of the pool, and its own placement rule. This
 * is where several routers disagree: each sees the load as of its last probe, and the others' placements
 * only once the shared count catches up. Candidates are built by {@link ReplicaLoad#candidate}, as the
 * service builds them.
 */
final class SimRouter {

    private final LoadBoard board;
    private final SessionCounts counts;
    private final PlacementRule rule;
    private final RandomGenerator random;
    /** Replica id → draining, in pool order. */
    private final Map<String, Boolean> view = new LinkedHashMap<>();

    SimRouter(Ewma ewma, long staleAfterMillis, long sustainMillis, long recentWindowMillis, SharedStore store,
              PlacementRule rule, RandomGenerator random) {
        this.board = new LoadBoard(ewma, staleAfterMillis, sustainMillis);
        this.counts = new SessionCounts(store, recentWindowMillis);
        this.rule = rule;
        this.random = random;
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

    /** Places a new session as the service does: candidates from board and counts, rule, then note it. */
    String place(String session, long now) {
        List<Candidate> ready = new ArrayList<>(view.size());
        for (Map.Entry<String, Boolean> e : view.entrySet()) {
            if (e.getValue()) {
                continue; // draining: keeps its sessions, takes no new ones
            }
            String id = e.getKey();
            ReplicaLoad load = board.get(id);
            ready.add(load.candidate(id, load.isFresh(now, board.staleAfterMillis()), counts.get(id),
                    counts.recent(id)));
        }
        String chosen = rule.place(session, ready, random);
        if (chosen != null) {
            board.notePlacement(chosen);
            counts.noteBound(chosen);
        }
        return chosen;
    }
}
