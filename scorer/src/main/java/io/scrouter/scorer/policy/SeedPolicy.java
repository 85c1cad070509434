package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The reference formula from the design this router starts from:
 * {@code score = wU × ewma_utilisation + wS × min(active_sessions / cap, 1)}, lowest wins, ties at random.
 *
 * <p>Kept as a named policy so better ones can be measured against it. Its known weakness: between two
 * polls the utilisation term does not move, so a burst of new sessions is spread only by the small
 * session term.
 */
public final class SeedPolicy implements PlacementPolicy {

    public static final String NAME = "seed";

    private final double utilisationWeight;
    private final double sessionWeight;
    private final long sessionCap;

    public SeedPolicy(double utilisationWeight, double sessionWeight, long sessionCap) {
        // NaN or infinite weights would turn every score into NaN, and the lowest-score pick would then
        // always keep the first candidate: the herding the random tie-break exists to prevent.
        if (!Double.isFinite(utilisationWeight) || !Double.isFinite(sessionWeight)
                || utilisationWeight < 0 || sessionWeight < 0 || utilisationWeight + sessionWeight == 0) {
            throw new IllegalArgumentException("weights must be finite, non-negative and not both zero, got utilisation="
                    + utilisationWeight + " sessions=" + sessionWeight);
        }
        if (sessionCap <= 0) {
            throw new IllegalArgumentException("session cap must be positive, got " + sessionCap);
        }
        this.utilisationWeight = utilisationWeight;
        this.sessionWeight = sessionWeight;
        this.sessionCap = sessionCap;
    }

    /** The formula with the design's weights (0.9 and 0.1). */
    public static SeedPolicy withDefaults(long sessionCap) {
        return new SeedPolicy(0.9, 0.1, sessionCap);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public double score(Candidate c) {
        double sessions = Math.min((double) c.activeSessions() / sessionCap, 1.0);
        return utilisationWeight * c.utilisation() + sessionWeight * sessions;
    }

    @Override
    public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
        return LowestScore.pick(candidates, this::score, random);
    }
}
