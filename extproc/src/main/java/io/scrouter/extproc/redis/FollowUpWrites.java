package io.scrouter.extproc.redis;

import org.redisson.api.RBatch;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The writes that follow a binding and that no decision waits for: the session's score in its replica's index
 * (session counts, eviction) and, for a new binding, its announcement on the feed. They are gathered and sent as
 * one pipelined batch per run of {@link #flush} on {@code flushes}: on the router's event loop, everything decided
 * in one turn of the loop goes out in one write, one ZADD per replica. Sent one batch per session, these writes
 * held a router to about half the new sessions per second it placed without them ({@code loadtest/README.md}, "Changes
 * made from the profile").
 *
 * <p>The feed's wire format is unchanged (one PUBLISH and one XADD per announcement), so routers of an earlier
 * release read it during a rollout. A lost batch only delays counts until each session's next idle-timer push, or
 * leaves the other routers to read the bindings from the store.
 *
 * <p>Whoever reads or trims an index waits for {@link #answered} first. A count that ran ahead of a queued ZADD
 * would miss a session the router already placed, and the router, which subtracts the placements made before
 * the count from its own tally, would lose it twice: a capped group then took one session more than its cap. A
 * ZREM that ran ahead of its ZADD would leave a released session counted until its idle TTL.
 */
final class FollowUpWrites {

    /** Writes per batch at most; more wait for the next batch, which is scheduled at once. */
    private static final int MAX_PER_BATCH = 1000;

    /**
     * One queued entry: a write, or ({@code waiter} not null) a caller waiting for every write queued before it.
     */
    private record Entry(String sessionId, String replicaId, double expiry, String announced,
                         CompletableFuture<Void> waiter) {
    }

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final Executor flushes;
    private final ConcurrentLinkedQueue<Entry> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** Completes when Redis has answered every batch sent so far; guarded by {@code this}, as flushes are. */
    private CompletableFuture<Void> sentSoFar = CompletableFuture.completedFuture(null);

    /**
     * @param flushes where batches are sent from: an event loop gathers a turn's writes; {@code Runnable::run}
     *                sends each write as it comes
     */
    FollowUpWrites(RedissonClient redis, RedisKeys keys, Executor flushes) {
        this.redis = redis;
        this.keys = keys;
        this.flushes = flushes;
    }

    /**
     * @param expiry    the session's score in its replica's index: when its binding expires
     * @param announced the binding to announce to the other routers, or null when it is not new
     */
    void add(String sessionId, String replicaId, double expiry, String announced) {
        pending.add(new Entry(sessionId, replicaId, expiry, announced, null));
        scheduleFlush();
    }

    /**
     * Completes once Redis has answered every write added before this call, or once they are lost (a failed batch,
     * a stopped loop): never exceptionally, as the caller's own command reports a Redis outage better.
     */
    CompletableFuture<Void> answered() {
        CompletableFuture<Void> waiter = new CompletableFuture<>();
        pending.add(new Entry(null, null, 0, null, waiter));
        scheduleFlush();
        return waiter;
    }

    private void scheduleFlush() {
        if (!scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            flushes.execute(this::flush);
        } catch (RejectedExecutionException stopping) {
            // The event loop is shutting down with the router: what is pending is lost, as an unsent batch would be.
            for (Entry e; (e = pending.poll()) != null; ) {
                if (e.waiter() != null) {
                    e.waiter().complete(null);
                }
            }
            scheduled.set(false);
        }
    }

    private void flush() {
        scheduled.set(false);
        // One flush at a time: a waiter must see every batch holding a write queued before it, even one that a
        // flush on another loop thread is still building.
        synchronized (this) {
            RBatch batch = redis.createBatch();
            Map<String, Map<String, Double>> scores = new HashMap<>();
            List<CompletableFuture<Void>> waiters = new ArrayList<>(0);
            int taken = 0;
            for (Entry e; taken < MAX_PER_BATCH && (e = pending.poll()) != null; ) {
                if (e.waiter() != null) {
                    waiters.add(e.waiter());
                    continue;
                }
                scores.computeIfAbsent(e.replicaId(), r -> new HashMap<>()).put(e.sessionId(), e.expiry());
                if (e.announced() != null) {
                    RedisBindingFeed.append(batch, keys, e.sessionId(), e.announced());
                }
                taken++;
            }
            if (taken > 0) {
                scores.forEach((replicaId, members) -> batch.<String>getScoredSortedSet(
                        keys.replicaSessions(replicaId), StringCodec.INSTANCE).addAllAsync(members));
                CompletableFuture<Void> thisBatch;
                try {
                    thisBatch = batch.executeAsync().toCompletableFuture().handle((r, failed) -> null);
                } catch (RuntimeException clientStopped) {
                    // The Redis client shut down with the router while this batch waited for its turn.
                    thisBatch = CompletableFuture.completedFuture(null);
                }
                sentSoFar = CompletableFuture.allOf(sentSoFar, thisBatch);
            }
            CompletableFuture<Void> upToHere = sentSoFar;
            waiters.forEach(w -> upToHere.whenComplete((r, failed) -> w.complete(null)));
        }
        if (!pending.isEmpty()) {
            scheduleFlush();
        }
    }
}
