package io.scrouter.extproc.pool;

import io.scrouter.scorer.LoadProbe;
import io.scrouter.scorer.load.LoadBoard;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Probes every replica's Spark metrics on each tick and records the result on the {@link LoadBoard}.
 *
 * <p>A replica whose previous probe is still running is skipped, not probed twice: a hung driver must not
 * pile up requests. The probe's own timeout turns a hang into a failure, and one failure is enough for the
 * board to stop offering the replica new sessions.
 */
public final class LoadProber {

    private final ServerPool pool;
    private final LoadBoard board;
    private final Function<Replica, LoadProbe> probeFactory;
    private final LongSupplier clock;
    private final Map<String, ProbeSlot> slots = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> failures = new ConcurrentHashMap<>();

    /** The probe built for one replica incarnation, and whether it is running. */
    private static final class ProbeSlot {
        final Replica replica;
        final LoadProbe probe;
        volatile boolean running;

        ProbeSlot(Replica replica, LoadProbe probe) {
            this.replica = replica;
            this.probe = probe;
        }
    }

    public LoadProber(ServerPool pool, LoadBoard board, Function<Replica, LoadProbe> probeFactory,
                      LongSupplier clockMillis) {
        this.pool = pool;
        this.board = board;
        this.probeFactory = probeFactory;
        this.clock = clockMillis;
    }

    public void probeAll() {
        PoolSnapshot snapshot = pool.snapshot();
        Set<String> present = ConcurrentHashMap.newKeySet();
        for (Replica r : snapshot.all()) {
            present.add(r.id());
            if (r.metricsUrl() == null) {
                continue;
            }
            ProbeSlot slot = slots.compute(r.id(), (id, old) -> old != null && sameEndpoint(old.replica, r)
                    ? old : new ProbeSlot(r, probeFactory.apply(r)));
            if (slot.running) {
                continue;
            }
            slot.running = true;
            try {
                slot.probe.sample().whenComplete((sample, error) -> {
                    slot.running = false;
                    if (pool.snapshot().get(r.id()) == null) {
                        return; // left while we probed
                    }
                    if (error != null) {
                        countFailure(r.id());
                        board.recordFailure(r.id(), describe(error));
                    } else {
                        board.recordSample(r.id(), sample, clock.getAsLong());
                    }
                });
            } catch (RuntimeException e) {
                slot.running = false;
                countFailure(r.id());
                board.recordFailure(r.id(), describe(e));
            }
        }
        slots.keySet().retainAll(present);
        failures.keySet().retainAll(present);
        board.retainOnly(present);
    }

    private void countFailure(String replicaId) {
        failures.computeIfAbsent(replicaId, k -> new AtomicLong()).incrementAndGet();
    }

    /** Failed probes per replica since it joined the pool (for metrics). */
    public long failuresOf(String replicaId) {
        AtomicLong n = failures.get(replicaId);
        return n == null ? 0 : n.get();
    }

    private static boolean sameEndpoint(Replica a, Replica b) {
        return a.grpcAddress().equals(b.grpcAddress()) && Objects.equals(a.metricsUrl(), b.metricsUrl());
    }

    private static String describe(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException
                || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof TimeoutException) {
            return "probe timed out";
        }
        return cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    }
}
