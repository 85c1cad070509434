package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.Placement;
import io.scrouter.scorer.PlacementPolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * The placement pipeline for a new session: keep the candidates whose load is known and fresh, let the
 * policy choose among them, and fall back to session counts when no load is known at all.
 *
 * <p>Why the fallback exists: a replica whose probe fails must never look idle, so it is dropped while
 * others have fresh samples. But when <em>every</em> sample is stale, the metrics side is down, not
 * Spark, and refusing all new sessions would turn a monitoring outage into a service outage. The
 * {@link Placement#degraded()} flag makes that mode visible.
 */
public final class Placer {

    private final PlacementPolicy policy;

    public Placer(PlacementPolicy policy) {
        this.policy = policy;
    }

    public PlacementPolicy policy() {
        return policy;
    }

    /**
     * @param ready every replica that may take new sessions (state ready); may be empty
     * @return the placement, or empty when {@code ready} is empty
     */
    public Optional<Placement> place(List<Candidate> ready, RandomGenerator random) {
        if (ready.isEmpty()) {
            return Optional.empty();
        }
        List<Candidate> fresh = new ArrayList<>(ready.size());
        for (Candidate c : ready) {
            if (c.fresh()) {
                fresh.add(c);
            }
        }
        if (!fresh.isEmpty()) {
            return Optional.of(new Placement(policy.choose(fresh, random).replicaId(), false));
        }
        Candidate byCount = LowestScore.pick(ready,
                c -> (double) c.activeSessions() + c.placementsSinceSample(), random);
        return Optional.of(new Placement(byCount.replicaId(), true));
    }
}
