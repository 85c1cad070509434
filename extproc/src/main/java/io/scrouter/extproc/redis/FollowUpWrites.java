package io.scrouter.extproc.redis;

import org.redisson.api.RBatch;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.util.HashMap;
import java.util.Map;
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
 */
final class FollowUpWrites {

    /** Writes per batch at most; more wait for the next batch, which is scheduled at once. */
    private static final int MAX_PER_BATCH = 1000;

    private record Write(String sessionId, String replicaId, double expiry, String announced) {
    }

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final Executor flushes;
    private final ConcurrentLinkedQueue<Write> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();

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
        pending.add(new Write(sessionId, replicaId, expiry, announced));
        scheduleFlush();
    }

    private void scheduleFlush() {
        if (!scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            flushes.execute(this::flush);
        } catch (RejectedExecutionException stopping) {
            // The event loop is shutting down with the router: what is pending is lost, as an unsent batch would be.
            pending.clear();
            scheduled.set(false);
        }
    }

    private void flush() {
        scheduled.set(false);
        RBatch batch = redis.createBatch();
        Map<String, Map<String, Double>> scores = new HashMap<>();
        int taken = 0;
        for (Write w; taken < MAX_PER_BATCH && (w = pending.poll()) != null; taken++) {
            scores.computeIfAbsent(w.replicaId(), r -> new HashMap<>()).put(w.sessionId(), w.expiry());
            if (w.announced() != null) {
                RedisBindingFeed.append(batch, keys, w.sessionId(), w.announced());
            }
        }
        if (taken == 0) {
            return;
        }
        scores.forEach((replicaId, members) -> batch.<String>getScoredSortedSet(keys.replicaSessions(replicaId),
                StringCodec.INSTANCE).addAllAsync(members));
        try {
            batch.executeAsync();
        } catch (RuntimeException clientStopped) {
            // The Redis client shut down with the router while this batch waited for its turn: nothing to send to.
            return;
        }
        if (!pending.isEmpty()) {
            scheduleFlush();
        }
    }
}
