package io.scrouter.extproc.pool;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Polls the instance store and applies what it finds to the {@link ServerPool}.
 *
 * <p>If the store cannot be read, the last pool keeps serving: a brief Redis or controller outage must not
 * empty the pool. At most one poll is in flight; a caller asking while one runs shares its result, so an
 * on-demand refresh (a session bound to a replica this router has not seen yet) costs nothing extra.
 */
public final class PoolRefresher {

    private static final Logger LOG = LoggerFactory.getLogger(PoolRefresher.class);

    private final InstanceStore store;
    private final ServerPool pool;
    private final Duration timeout;
    private final LongSupplier clock;
    private final long departureGraceMillis;
    private volatile boolean warnedEmptyStore;
    private final Map<String, Long> missingSince = new ConcurrentHashMap<>();
    private final AtomicReference<CompletableFuture<PoolSnapshot>> inFlight = new AtomicReference<>();
    private volatile long lastSuccessMillis = Long.MIN_VALUE;
    private volatile String lastError;

    public PoolRefresher(InstanceStore store, ServerPool pool, Duration timeout, LongSupplier clockMillis) {
        this(store, pool, timeout, Duration.ZERO, clockMillis);
    }

    /**
     * @param departureGrace a replica missing from the store stays in the pool this long before it leaves:
     *                       a Redis that restarted empty (or lost writes in a failover) must not turn every
     *                       session into a lost one before the publishers renew their entries
     */
    public PoolRefresher(InstanceStore store, ServerPool pool, Duration timeout, Duration departureGrace,
                         LongSupplier clockMillis) {
        this.departureGraceMillis = departureGrace.toMillis();
        this.store = store;
        this.pool = pool;
        this.timeout = timeout;
        this.clock = clockMillis;
    }

    /** Polls now (or joins the poll in flight). Never completes exceptionally: it yields the pool in force. */
    public CompletableFuture<PoolSnapshot> refresh() {
        CompletableFuture<PoolSnapshot> mine = new CompletableFuture<>();
        CompletableFuture<PoolSnapshot> running = inFlight.compareAndExchange(null, mine);
        if (running != null) {
            return running;
        }
        CompletableFuture<List<Replica>> listed;
        try {
            listed = store.list().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            listed = CompletableFuture.failedFuture(e);
        }
        listed.whenComplete((replicas, error) -> {
            try {
                if (error != null) {
                    noteFailure(error);
                } else {
                    PoolChange change = pool.replace(withinGrace(replicas));
                    if (!change.isEmpty()) {
                        LOG.atInfo().setMessage("pool changed").addKeyValue("joined", change.joined())
                                .addKeyValue("left", change.left()).addKeyValue("stateChanged", change.stateChanged())
                                .addKeyValue("size", change.after().size()).log();
                    }
                    if (lastError != null) {
                        LOG.info("instance store readable again; pool has {} replicas", change.after().size());
                    }
                    lastError = null;
                    lastSuccessMillis = clock.getAsLong();
                }
            } catch (RuntimeException e) {
                noteFailure(e);
            } finally {
                inFlight.set(null);
                mine.complete(pool.snapshot());
            }
        });
        return mine;
    }

    /** Keeps replicas that vanished less than the grace period ago, as they were. */
    private List<Replica> withinGrace(List<Replica> listed) {
        if (departureGraceMillis <= 0) {
            return listed;
        }
        long now = clock.getAsLong();
        Set<String> present = new HashSet<>();
        listed.forEach(r -> present.add(r.id()));
        missingSince.keySet().retainAll(pool.snapshot().all().stream().map(Replica::id)
                .filter(id -> !present.contains(id)).toList());
        List<Replica> kept = new ArrayList<>(listed);
        for (Replica r : pool.snapshot().all()) {
            if (present.contains(r.id())) {
                continue;
            }
            long since = missingSince.computeIfAbsent(r.id(), id -> now);
            if (now - since < departureGraceMillis) {
                kept.add(r);
            }
        }
        boolean emptyStore = kept.size() > listed.size() && present.isEmpty();
        if (emptyStore && !warnedEmptyStore) {
            LOG.warn("the instance store lists no replica; keeping the {} known ones for up to {} ms in case it "
                    + "restarted empty or failed over (publishers re-register them on their next renewal)",
                    kept.size(), departureGraceMillis);
        }
        warnedEmptyStore = emptyStore;
        return kept;
    }

    private void noteFailure(Throwable error) {
        String message = error.getClass().getSimpleName() + ": " + error.getMessage();
        if (lastError == null) {
            LOG.warn("cannot read the instance store ({}); routing continues with the last known pool of {} "
                    + "replicas until it is back", message, pool.snapshot().size());
        }
        lastError = message;
    }

    /** When the pool was last read successfully, or {@link Long#MIN_VALUE} if never. */
    public long lastSuccessMillis() {
        return lastSuccessMillis;
    }

    /** The error of the latest poll, or null when it succeeded. */
    public String lastError() {
        return lastError;
    }
}
