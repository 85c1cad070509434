package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;

import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.random.RandomGenerator;

/**
 * Picks the candidate with the lowest score, uniformly at random among those within {@link #TIE} of it.
 *
 * <p>One pass with reservoir sampling over the tied set: no allocation, so it stays cheap for hundreds of
 * replicas on the per-request path.
 */
final class LowestScore {

    /** Scores closer than this are equal: float noise must not decide placement. */
    static final double TIE = 1e-9;

    private LowestScore() {
    }

    static Candidate pick(List<Candidate> candidates, ToDoubleFunction<Candidate> score, RandomGenerator random) {
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("no candidates to choose from");
        }
        Candidate best = null;
        double bestScore = Double.POSITIVE_INFINITY;
        int tied = 0;
        for (Candidate c : candidates) {
            double s = score.applyAsDouble(c);
            if (best == null || s < bestScore - TIE) {
                best = c;
                bestScore = s;
                tied = 1;
            } else if (Math.abs(s - bestScore) <= TIE) {
                tied++;
                if (random.nextInt(tied) == 0) {
                    best = c;
                }
            }
        }
        return best;
    }
}
