package io.scrouter.loadtest.sim;

import io.scrouter.extproc.routing.SessionCounts;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.load.ReplicaLoad;
import io.scrouter.scorer.smoothing.Ewma;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * One router instance in the simulation: its own {@link LoadBoard} fed by its own probes, its own
 * {@link SessionCounts} over the shared store, its own view of the pool, and its own placement rule. This
 * is where several routers disagree: each sees the load as of its last probe, and the others' placements
 * only once the shared count catches up.
 */
final class SimRouter {

    private final LoadBoard board;
    private final SessionCounts counts;
    private final PlacementRule rule;
    private final RandomGenerator random;
    private final Set<String> view = new LinkedHashSet<>();

    SimRouter(Ewma ewma, long staleAfterMillis, SharedStore store, PlacementRule rule, RandomGenerator random) {
        this.board = new LoadBoard(ewma, staleAfterMillis);
        this.counts = new SessionCounts(store);
        this.rule = rule;
        this.random = random;
    }

    /** The pool as this router last read it; replicas that left are forgotten, as the prober does. */
    void poolRead(List<String> published) {
        view.clear();
        view.addAll(published);
        board.retainOnly(view);
    }

    Set<String> view() {
        return view;
    }

    void probeAnswered(String replicaId, LoadSample sample, long atMillis) {
        if (view.contains(replicaId)) {
            board.recordSample(replicaId, sample, atMillis);
        }
    }

    void probeFailed(String replicaId) {
        if (view.contains(replicaId)) {
            board.recordFailure(replicaId, "probe timed out");
        }
    }

    void refreshCounts() {
        counts.refresh(List.copyOf(view), 3_600_000);
    }

    /** Places a new session as the service does: candidates from board and counts, rule, then note it. */
    String place(String session, long now) {
        List<Candidate> ready = new ArrayList<>(view.size());
        for (String id : view) {
            ReplicaLoad load = board.get(id);
            ready.add(new Candidate(id, load.utilisation(), load.isFresh(now, board.staleAfterMillis()),
                    counts.get(id), load.placementsSinceSample()));
        }
        String chosen = rule.place(session, ready, random);
        if (chosen != null) {
            board.notePlacement(chosen);
            counts.noteBound(chosen);
        }
        return chosen;
    }
}
