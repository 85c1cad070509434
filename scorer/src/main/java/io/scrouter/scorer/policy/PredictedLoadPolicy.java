package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Places a new session on the replica whose predicted utilisation, with that session added, is lowest:
 * half what the replica's load says (its smoothed utilisation, capped, plus this router's recent placements
 * that the samples cannot show yet), half what its share of the shared session count says.
 *
 * <pre>
 *   perSession  = Σ sustainedUtilisation × slots / Σ sessions     load of one session, in task slots
 *                 (over the candidates; never below slots / cap, a prior for an empty pool)
 *   measured(r) = min(utilisation(r), FAST_CAP) + unseenPlacements(r) × perSession / slots(r)
 *   byCount(r)  = (sessions(r) + 1) × perSession / slots(r)
 *   predicted   = ½ measured + ½ byCount                           lowest wins, ties at random
 * </pre>
 *
 * <p>Why each part, from the simulator (loadtest/README.md, "The default policy"):
 * <ul>
 *   <li><b>The load term</b> is join-the-shortest-queue on what the probe saw: it is what makes the seed
 *       formula hard to beat when sessions arrive one at a time. It is capped because a replica whose
 *       queue is several times its slots is simply full, and one giant query must not keep it from new
 *       sessions for longer than that query lasts.</li>
 *   <li><b>Unseen placements</b> answer the gap between probes: each session this router just placed counts
 *       at the average load of a session until samples can show it. The count fades over the load board's
 *       horizon and is not reset by a new sample, because a session placed just before a probe has not sent
 *       its first query yet (the old rule reset it and got worse with faster probes).</li>
 *   <li><b>The session count</b> is shared by every router and moves at once with every placement and every
 *       session end, as requests in flight do for Prequal and for Envoy's LEAST_REQUEST: it stops several
 *       routers with the same stale samples from herding, and spreads a burst whatever the samples say.</li>
 *   <li><b>Per slot</b>: both terms are in utilisation, so a replica twice the size takes twice the
 *       sessions.</li>
 * </ul>
 * Two passes over the candidates, no allocation: it runs on Envoy's request path.
 */
public final class PredictedLoadPolicy implements PlacementPolicy {

    public static final String NAME = "predicted";

    /** Weight of the measured term against the count term (½: see the class comment). */
    static final double MEASURED_WEIGHT = 0.5;

    /** Utilisation above which a replica counts as simply full ((running + pending) = 4 × slots). */
    static final double FAST_CAP = 4.0;

    private final long sessionCap;
    private final double measuredWeight;

    /** @param sessionCap sets the prior load of one session (slots / cap) while measurements show less */
    public PredictedLoadPolicy(long sessionCap) {
        this(sessionCap, MEASURED_WEIGHT);
    }

    /** With a measured weight other than the default; for sweeps in the simulator. */
    public PredictedLoadPolicy(long sessionCap, double measuredWeight) {
        if (sessionCap <= 0) {
            throw new IllegalArgumentException("session cap must be positive, got " + sessionCap);
        }
        if (!(measuredWeight >= 0 && measuredWeight <= 1)) {
            throw new IllegalArgumentException("measured weight must be in [0, 1], got " + measuredWeight);
        }
        this.sessionCap = sessionCap;
        this.measuredWeight = measuredWeight;
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Task slots of a candidate; a replica whose size is not known yet counts as one slot, like its peers. */
    static double slotsOf(Candidate c) {
        return c.slots() > 0 ? c.slots() : 1.0;
    }

    private static double nonNegative(double v) {
        return v > 0 ? v : 0.0; // NaN (never sampled) reads as 0
    }

    /** Expected load of one session in task slots, estimated from the whole candidate set. */
    public double perSession(List<Candidate> candidates) {
        double load = 0;
        double slots = 0;
        long sessions = 0;
        for (int i = 0, n = candidates.size(); i < n; i++) {
            Candidate c = candidates.get(i);
            double s = slotsOf(c);
            load += nonNegative(c.sustainedUtilisation()) * s;
            slots += s;
            sessions += c.activeSessions();
        }
        double prior = slots / candidates.size() / sessionCap;
        return sessions == 0 ? prior : Math.max(prior, load / sessions);
    }

    /** Utilisation {@code c} is predicted to have with one more session, given {@link #perSession}. */
    public double predicted(Candidate c, double perSession) {
        double slots = slotsOf(c);
        double measured = Math.min(nonNegative(c.utilisation()), FAST_CAP) + c.unseenPlacements() * perSession / slots;
        double byCount = (c.activeSessions() + 1) * perSession / slots;
        return measuredWeight * measured + (1.0 - measuredWeight) * byCount;
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
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("no candidates to choose from");
        }
        double perSession = perSession(candidates);
        Candidate best = null;
        double bestScore = Double.POSITIVE_INFINITY;
        int tied = 0;
        // LowestScore.pick inlined: no lambda capture on the request path.
        for (int i = 0, n = candidates.size(); i < n; i++) {
            Candidate c = candidates.get(i);
            double s = predicted(c, perSession);
            if (best == null || s < bestScore - LowestScore.TIE) {
                best = c;
                bestScore = s;
                tied = 1;
            } else if (Math.abs(s - bestScore) <= LowestScore.TIE && random.nextInt(++tied) == 0) {
                best = c;
            }
        }
        return best;
    }
}
