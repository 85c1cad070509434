package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The replica with the fewest sessions per task slot in the shared store, ties at random: least-request
 * on sessions, weighted by size. A baseline that ignores load; selectable so it can be compared with the
 * default on real replicas.
 */
public final class FewestSessionsPolicy implements PlacementPolicy {

    public static final String NAME = "fewest-sessions";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double score(Candidate c) {
        return c.activeSessions() / PredictedLoadPolicy.slotsOf(c);
    }

    @Override
    public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
        return LowestScore.pick(candidates, this::score, random);
    }
}
