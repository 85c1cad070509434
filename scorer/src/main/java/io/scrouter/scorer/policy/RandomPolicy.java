package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;

import java.util.List;
import java.util.random.RandomGenerator;

/** A uniformly random ready replica: the baseline every placement policy must beat. */
public final class RandomPolicy implements PlacementPolicy {

    public static final String NAME = "random";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("no candidates to choose from");
        }
        return candidates.get(random.nextInt(candidates.size()));
    }
}
