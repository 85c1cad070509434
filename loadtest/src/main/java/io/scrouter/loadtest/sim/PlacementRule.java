package io.scrouter.loadtest.sim;

import io.scrouter.scorer.Candidate;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * How one simulated router picks a replica for a new session. Most contenders are
 * {@link io.scrouter.scorer.PlacementPolicy} instances run through the real {@link io.scrouter.scorer.policy.Placer};
 * this wider shape exists for the two that need more than a policy sees: consistent hashing needs the
 * session id, and the greedy-instant rule needs the true load.
 */
public interface PlacementRule {

    /** The chosen replica id, or null when {@code ready} is empty. */
    String place(String session, List<Candidate> ready, RandomGenerator random);
}
