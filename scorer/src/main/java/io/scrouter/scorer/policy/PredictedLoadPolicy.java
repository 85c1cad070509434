package io.scrouter.scorer.policy;

import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;

import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Places a new session on the replica whose predicted utilisation, with that session added, is lowest: partly
 * what the replica's load says (its smoothed utilisation, capped, plus this router's recent placements that the
 * samples cannot show yet), partly what its share of the sessions <em>in use</em> says.
 *
 * <pre>
 *   perSession  = Σ sustainedUtilisation × slots / Σ sessions     load of one session, in task slots, over
 *                 (over the candidates; never below Σ slots / Σ sessions: see {@link #perSession})   its life
 *   measured(r) = min(utilisation(r), LOAD_CAP) + min(unseen(r), recent(r)) × perSession / slots(r)
 *   byCount(r)  = (recent(r) + 1) × perSession / slots(r)            recent(r): sessions in use
 *   predicted   = 0.4 × measured + 0.6 × byCount                    lowest wins, ties at random
 * </pre>
 *
 * <p>Why each part, from the simulator (loadtest/README.md, "The default policy"):
 * <ul>
 *   <li><b>The load term</b> is join-the-shortest-queue on what the probe saw: it is what makes the seed
 *       formula hard to beat when sessions arrive one at a time. It is capped because a replica whose
 *       queue is many times its slots is simply full, and one giant query must not keep it from new
 *       sessions for longer than that query lasts.</li>
 *   <li><b>Unseen placements</b> answer the gap between probes: each session this router just placed counts
 *       at the average load of a session until samples can show it. The count fades over the load board's
 *       horizon and is not reset by a new sample, because a session placed just before a probe has not sent
 *       its first query yet (the old rule reset it and got worse with faster probes). It never exceeds the
 *       replica's sessions in use: a run of short sessions, released through another router, otherwise
 *       left phantom load for the whole horizon, and sent new sessions to a replica running one heavy job
 *       (seen with real Spark, DataPathWithRealSparkTest).</li>
 *   <li><b>The count of recent sessions</b> (those that sent a request within the store's recent window,
 *       and the ones just placed) is shared by every router and moves at once with every placement, as
 *       requests in flight do for Prequal and for Envoy's LEAST_REQUEST: it stops several routers with the
 *       same stale samples from herding, and spreads a burst whatever the samples say. It counts sessions in
 *       use, not every bound one: a notebook left open stays bound until its idle TTL, and counting it made a
 *       replica full of idle notebooks look busier than one running a heavy job for a few sessions.</li>
 *   <li><b>A session weighs the load per bound session</b>, idle ones included: what a new session brings on
 *       average over its life. Spread over the recent sessions only, the load of one heavy job (or of work
 *       the router did not place) would make every new session look as heavy as that job.</li>
 *   <li><b>Per slot</b>: both terms are in utilisation, so a replica twice the size takes twice the
 *       sessions.</li>
 * </ul>
 * Two passes over the candidates, no allocation: it runs on Envoy's request path.
 */
public final class PredictedLoadPolicy implements PlacementPolicy {

    public static final String NAME = "predicted";

    /** Weight of the measured term against the count term (see the class comment). */
    static final double MEASURED_WEIGHT = 0.4;

    /** Utilisation above which a replica counts as simply full ((running + pending) = 32 × slots). */
    static final double LOAD_CAP = 32.0;

    private final double measuredWeight;
    private final double loadCap;
    private final boolean countRecent;

    public PredictedLoadPolicy() {
        this(MEASURED_WEIGHT, LOAD_CAP, true);
    }

    /**
     * With another measured weight and load cap, counting recent sessions ({@code countRecent}) or every bound
     * one (the policy before the recent count); for sweeps in the simulator.
     */
    public PredictedLoadPolicy(double measuredWeight, double loadCap, boolean countRecent) {
        if (!(measuredWeight >= 0 && measuredWeight <= 1)) {
            throw new IllegalArgumentException("measured weight must be in [0, 1], got " + measuredWeight);
        }
        if (!(loadCap > 0)) {
            throw new IllegalArgumentException("load cap must be positive, got " + loadCap);
        }
        this.measuredWeight = measuredWeight;
        this.loadCap = loadCap;
        this.countRecent = countRecent;
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

    /**
     * Expected load of one session in task slots, estimated from the whole candidate set: the sustained load
     * per bound session (idle ones included, so it is what a session brings on average over its life), but
     * never less than the candidates' slots shared among their sessions. That floor assumes sessions are as
     * heavy as the pool can bear until samples show more: right after a start, or in a crowd of sessions that
     * have not sent queries yet, the measured load per session is near zero, and without the floor the count
     * term would weigh nothing against a replica that merely looked idle at the last probe.
     */
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
        double floor = slots / Math.max(1, sessions);
        return Math.max(floor, load / Math.max(1, sessions));
    }

    /** Utilisation {@code c} is predicted to have with one more session, given {@link #perSession}. */
    public double predicted(Candidate c, double perSession) {
        double slots = slotsOf(c);
        long inUse = countRecent ? c.recentSessions() : c.activeSessions();
        // A placement whose session is no longer in use (released, or gone idle) will never bring its load.
        double unseen = Math.min(c.unseenPlacements(), inUse);
        double measured = Math.min(nonNegative(c.utilisation()), loadCap) + unseen * perSession / slots;
        double byCount = (inUse + 1) * perSession / slots;
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
