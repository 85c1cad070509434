package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Places a new session on the replica with the lowest <em>predicted</em> utilisation: what the last sample
 * says plus the sessions placed since, blended with what the replica's session count implies.
 *
 * <p>Why: utilisation only moves when the replica is probed again (about once a second), so a formula
 * driven by it sends every new session of a burst to the same replica until the next probe. Here each
 * placement raises the replica's prediction at once by one session's expected load, so a burst spreads
 * in proportion to headroom.
 *
 * <pre>
 *   perSession = Σ utilisation / Σ sessions          (over the candidates; 1/cap while no session is bound)
 *   measured   = utilisation + placementsSinceSample × perSession
 *   byCount    = sessions × perSession                (what the shared session count implies)
 *   predicted  = ½ measured + ½ byCount
 * </pre>
 *
 * The session count comes from the shared store, so it includes other routers' recent placements that
 * neither this router's sample nor its own placement counter can see: that term stops several routers
 * from herding onto the replica that looked idle to all of them. The measured term keeps a replica whose
 * few sessions are heavy from looking cheap. Equal weights were the best compromise in the simulator
 * (loadtest/README.md): more weight on counts helps bursts and hurts skewed load, less does the reverse.
 * Lowest prediction wins; ties are broken at random.
 */
public final class PredictedLoadPolicy implements PlacementPolicy {

    public static final String NAME = "predicted";

    /** Weight of the measured term against the count term (see the class comment for why one half). */
    static final double MEASURED_WEIGHT = 0.5;

    private final long sessionCap;

    /** @param sessionCap sets the prior load of one session (1 / cap) until any session is bound */
    public PredictedLoadPolicy(long sessionCap) {
        if (sessionCap <= 0) {
            throw new IllegalArgumentException("session cap must be positive, got " + sessionCap);
        }
        this.sessionCap = sessionCap;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Expected utilisation one session adds, estimated from the whole candidate set. */
    public double perSession(List<Candidate> candidates) {
        double load = 0;
        long sessions = 0;
        for (Candidate c : candidates) {
            load += Math.max(0.0, c.utilisation());
            sessions += c.activeSessions();
        }
        return sessions == 0 || load == 0 ? 1.0 / sessionCap : load / sessions;
    }

    public double predicted(Candidate c, double perSession) {
        double measured = Math.max(0.0, c.utilisation()) + c.placementsSinceSample() * perSession;
        double byCount = c.activeSessions() * perSession;
        return MEASURED_WEIGHT * measured + (1.0 - MEASURED_WEIGHT) * byCount;
    }

    @Override
    public double[] scores(List<Candidate> candidates) {
        double perSession = perSession(candidates);
        double[] out = new double[candidates.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = predicted(candidates.get(i), perSession);
        }
        return out;
    }

    @Override
    public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
        double perSession = perSession(candidates);
        return LowestScore.pick(candidates, c -> predicted(c, perSession), random);
    }
}
