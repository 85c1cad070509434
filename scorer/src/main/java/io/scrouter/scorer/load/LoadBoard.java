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
 */
public final class LoadBoard {

    private final Ewma ewma;
    private final long staleAfterMillis;
    private final Map<String, ReplicaLoad> loads = new ConcurrentHashMap<>();

    /**
     * @param ewma             smoothing of utilisation
     * @param staleAfterMillis a sample older than this no longer counts as fresh
     */
    public LoadBoard(Ewma ewma, long staleAfterMillis) {
        if (staleAfterMillis <= 0) {
            throw new IllegalArgumentException("staleAfterMillis must be positive, got " + staleAfterMillis);
        }
        this.ewma = ewma;
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
            return new ReplicaLoad(smoothed, raw, atMillis, 0, null, 0);
        });
    }

    /** Records a failed or timed-out probe; the replica stops being fresh at once. */
    public ReplicaLoad recordFailure(String replicaId, String reason) {
        return loads.compute(replicaId, (id, old) -> {
            ReplicaLoad prev = old == null ? ReplicaLoad.UNKNOWN : old;
            return new ReplicaLoad(prev.utilisation(), prev.lastUtilisation(), prev.lastSampleAtMillis(),
                    prev.consecutiveFailures() + 1, reason, prev.placementsSinceSample());
        });
    }

    /** Counts a new session placed on {@code replicaId}, until its next sample shows the real effect. */
    public void notePlacement(String replicaId) {
        loads.compute(replicaId, (id, old) -> {
            ReplicaLoad prev = old == null ? ReplicaLoad.UNKNOWN : old;
            return new ReplicaLoad(prev.utilisation(), prev.lastUtilisation(), prev.lastSampleAtMillis(),
                    prev.consecutiveFailures(), prev.lastError(), prev.placementsSinceSample() + 1);
        });
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
