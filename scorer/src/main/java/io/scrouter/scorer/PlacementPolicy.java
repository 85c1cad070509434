package io.scrouter.scorer;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Chooses the replica for a new session. Policies are looked up by {@link #name()} from configuration, so
 * they can be compared side by side in the simulator.
 *
 * <p>Contract: {@code candidates} is non-empty and every candidate is ready and {@link Candidate#fresh()};
 * the result is one of them. Ties must be broken with {@code random}, never by list order, so several
 * routers with the same view do not all pick the same replica.
 */
public interface PlacementPolicy {

    String name();

    Candidate choose(List<Candidate> candidates, RandomGenerator random);

    /**
     * The candidate's score under this policy (lower is better), for operators to see why a replica is or
     * is not chosen; NaN when the policy does not reduce a candidate to one number.
     */
    default double score(Candidate candidate) {
        return Double.NaN;
    }

    /**
     * Scores of several candidates considered together, in order; for policies whose score depends on the
     * whole set (an estimate drawn from all replicas). Defaults to {@link #score} of each.
     */
    default double[] scores(List<Candidate> candidates) {
        double[] out = new double[candidates.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = score(candidates.get(i));
        }
        return out;
    }
}
