package io.scrouter.scorer.load;

import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.smoothing.Ewma;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-replica load, written by probe callbacks and read on every placement. Thread-safe.
 *
 * <p>Each replica's entry is an immutable {@link ReplicaLoad} swapped atomically, so a reader never sees a
 * half-applied sample and readers never lock. Time is always an argument.
 *
 * <p>Besides the configured EWMA, the board keeps a slower average over the <em>sustain horizon</em>, and
 * counts this router's placements that samples cannot show yet. A session placed now sends its first
 * query seconds later, and an interactive session is idle most of the time, so the next sample says
 * almost nothing about it. The count of unseen placements therefore fades with time, at the same rate
 * however often the replica is probed, instead of being reset by the next sample.
 */
public final class LoadBoard {

    /**
     * Default horizon: about the time a new session takes to show in samples (its first query comes
     * seconds after it opens) while still averaging a few probes. Chosen in the simulator among 15 s and
     * 60 s (loadtest/README.md, "The default policy").
     */
    public static final long DEFAULT_SUSTAIN_MILLIS = 15_000;

    private final Ewma ewma;
    private final Ewma sustained;
    private final long sustainMillis;
    private final long staleAfterMillis;
    private final Map<String, ReplicaLoad> loads = new ConcurrentHashMap<>();

    /**
     * @param ewma             smoothing of utilisation
     * @param staleAfterMillis a sample older than this no longer counts as fresh
     */
    public LoadBoard(Ewma ewma, long staleAfterMillis) {
        this(ewma, staleAfterMillis, DEFAULT_SUSTAIN_MILLIS);
    }

    /**
     * @param sustainMillis time constant of the sustained average and of the fading of unseen placements
     */
    public LoadBoard(Ewma ewma, long staleAfterMillis, long sustainMillis) {
        if (staleAfterMillis <= 0) {
            throw new IllegalArgumentException("staleAfterMillis must be positive, got " + staleAfterMillis);
        }
        if (sustainMillis <= 0) {
            throw new IllegalArgumentException("sustainMillis must be positive, got " + sustainMillis);
        }
        this.ewma = ewma;
        // Weight 1 - 1/e per horizon: an exponential average whose time constant is the horizon.
        this.sustained = new Ewma(1.0 - Math.exp(-1.0), sustainMillis);
        this.sustainMillis = sustainMillis;
        this.staleAfterMillis = staleAfterMillis;
    }

    public long staleAfterMillis() {
        return staleAfterMillis;
    }

    /** Records a successful probe of {@code replicaId} taken at {@code atMillis}. */
    public ReplicaLoad recordSample(String replicaId, LoadSample sample, long atMillis) {
        double raw = sample.utilisation();
        return loads.compute(replicaId, (id, old) -> {
            ReplicaLoad prev = old == null ? ReplicaLoad.UNKNOWN : old;
            if (prev.everSampled() && atMillis < prev.lastSampleAtMillis()) {
                return prev; // a late answer to an older probe must not overwrite a newer reading
            }
            double smoothed = ewma.next(prev.utilisation(), prev.lastSampleAtMillis(), raw, atMillis);
            double slow = sustained.next(prev.sustainedUtilisation(), prev.lastSampleAtMillis(), raw, atMillis);
            double unseen = prev.unseenPlacements();
            if (prev.everSampled()) {
                unseen *= Math.exp(-(double) (atMillis - prev.lastSampleAtMillis()) / sustainMillis);
            }
            return new ReplicaLoad(smoothed, raw, atMillis, 0, null, 0, sample.maxTasks(), slow, unseen);
        });
    }

    /** Records a failed or timed-out probe; the replica stops being fresh at once. */
    public ReplicaLoad recordFailure(String replicaId, String reason) {
        return loads.compute(replicaId, (id, old) -> {
            ReplicaLoad prev = old == null ? ReplicaLoad.UNKNOWN : old;
            return new ReplicaLoad(prev.utilisation(), prev.lastUtilisation(), prev.lastSampleAtMillis(),
                    prev.consecutiveFailures() + 1, reason, prev.placementsSinceSample(), prev.slots(),
                    prev.sustainedUtilisation(), prev.unseenPlacements());
        });
    }

    /** Counts a new session placed on {@code replicaId}, until samples can show its load. */
    public void notePlacement(String replicaId) {
        loads.compute(replicaId, (id, old) -> {
            ReplicaLoad prev = old == null ? ReplicaLoad.UNKNOWN : old;
            return new ReplicaLoad(prev.utilisation(), prev.lastUtilisation(), prev.lastSampleAtMillis(),
                    prev.consecutiveFailures(), prev.lastError(), prev.placementsSinceSample() + 1, prev.slots(),
                    prev.sustainedUtilisation(), prev.unseenPlacements() + 1);
        });
    }

    /**
     * A session of {@code replicaId} was released (its client sent {@code ReleaseSession}): if it was among the
     * unseen placements, it will never bring the load they stand for. Takes one back, never below zero.
     */
    public void noteRelease(String replicaId) {
        loads.computeIfPresent(replicaId, (id, prev) -> prev.unseenPlacements() <= 0 ? prev
                : new ReplicaLoad(prev.utilisation(), prev.lastUtilisation(), prev.lastSampleAtMillis(),
                        prev.consecutiveFailures(), prev.lastError(), prev.placementsSinceSample(), prev.slots(),
                        prev.sustainedUtilisation(), Math.max(0.0, prev.unseenPlacements() - 1)));
    }

    /** The replica's load; {@code UNKNOWN}-like (never sampled) if the board has not heard of it. */
    public ReplicaLoad get(String replicaId) {
        return loads.getOrDefault(replicaId, ReplicaLoad.UNKNOWN);
    }

    public boolean isFresh(String replicaId, long nowMillis) {
        return get(replicaId).isFresh(nowMillis, staleAfterMillis);
    }

    /** Forgets replicas that left the pool, so a replica that comes back later starts from nothing. */
    public void retainOnly(Set<String> replicaIds) {
        loads.keySet().retainAll(replicaIds);
    }
}
