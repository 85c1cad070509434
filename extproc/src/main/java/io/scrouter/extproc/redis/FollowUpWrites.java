package io.scrouter.extproc.redis;

import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The writes that follow a binding and that no decision waits for: the session's score in its replica's index
 * (session counts, eviction) and, for a new binding, its announcement on the feed. They are gathered and sent as
 * one batch per run of {@link #flush}: on the router's event loop, everything added within {@code
 * redis.followUpGather} (1 ms unless set) of the batch's first write goes out in one write, one ZADD per replica.
 * Sent one batch per session, these writes held a router to about half the new sessions per second it placed without
 * them ({@code loadtest/README.md}, "Changes made from the profile"); sent once per turn of the loop, at 4 new
 * sessions in flight they still cost about one script call per two sessions; gathering for 1 ms removed about a
 * fifth of the router's and Redis's CPU per new session there ({@code loadtest/README.md}, "Follow-up writes
 * gathered for a millisecond"), and 5 ms a third or more of two routers' ("What does change it: batches per
 * session").
 *
 * <p>Gathering delays what no request waits for: another router hears of a new binding up to the window later
 * (it reads the binding from the store meanwhile, as it does for any binding it has not heard of), and a session
 * counts in its replica's index that much later. The one case where the store cannot stand in for the feed is a
 * Redis that hangs: a session bound within the window before it hangs is never announced, so until Redis is back it
 * is known to its own router alone, and another router may place its next request elsewhere (README, "When things
 * fail"). Reads that must come after the writes ({@link #inOrder}) do not wait for the window: each sends the writes
 * queued before it at once.
 *
 * <p>Where every key lives on one server (single and Sentinel modes) a batch is one call of the {@code FOLLOW_UP}
 * script ({@link SessionScripts}) rather than a pipeline of its commands: Redisson's per-command work (a promise, a
 * pooled connection taken and given back, a reply decoded) came three times per batch, and a script call costs it
 * once. Its work per argument (a buffer, a copy, a type check) is paid per argument too, so the script takes the
 * batch's announcements as one argument and each replica's index writes as one more, not two arguments per write.
 * Inside the script each write stands alone, as in a pipeline: a write Redis refuses (out of memory, a key of the
 * wrong type) does not stop the others, and the announcements go first. A Redis Cluster spreads the indexes and
 * the feed over slots that one script may not span, so there the batch is a pipeline of one {@code ANNOUNCE} call,
 * on the stream's key alone, and the ZADDs. Either way the stream's entries are as earlier versions of the router
 * wrote them (one XADD per announcement), so those read it during a rollout; they do not hear the batches'
 * channel, so they learn the new version's bindings at their next poll instead of at once. A lost batch only delays
 * counts until each session's next idle-timer push, or leaves the other routers to read the bindings from the store.
 *
 * <p>Given the router's {@link PipelinedConnection} on its event loop (single mode), a batch is sent on it instead of
 * through Redisson, and need not wait for its window: when a new session's {@code SET} is about to go out on that
 * connection, the batch waiting for its window is written first, unflushed, and the {@code SET}'s flush carries both
 * ({@link #rideAlong}); its window's timer is cancelled. Redis then reads both in one call and answers both in one
 * write, and neither the router's loop nor Redis wakes again for the batch. No batch waits longer than its window;
 * most go sooner. Measured: {@code loadtest/README.md}, "The follow-up batch sent with the next SET".
 *
 * <p>Whoever reads or trims an index does it {@link #inOrder in order} with these writes: it sees every write queued
 * before it and none queued after it. A count that ran ahead of a queued ZADD would miss a session the router already
 * placed, and the router, which subtracts the placements made before the count from its own tally, would lose it
 * twice: a capped group then took one session more than its cap. A count that also saw writes queued after it
 * started counted those placements twice, in the count and in the tally, until the next count: a capped group then
 * refused a session while it had room. A ZREM that ran ahead of its ZADD would leave a released session counted
 * until its idle TTL.
 */
final class FollowUpWrites {

    /**
     * Writes per batch at most; more wait for the next batch, which is scheduled at once. {@code FOLLOW_UP} passes one
     * replica's members to ZADD through Lua's {@code unpack}, which Redis's Lua allows up to about 8,000 values: two
     * per write, so this must stay under 4,000.
     */
    static final int MAX_PER_BATCH = 1000;

    /** One queued entry: a write, or ({@code read} not null) a command that must run in order with the writes. */
    private record Entry(String sessionId, String replicaId, double expiry, String announced, InOrder<?> read) {
    }

    /** A command run once every write queued before it is answered, and its caller's result. */
    private record InOrder<T>(Supplier<CompletableFuture<T>> command, CompletableFuture<T> result) {

        /** Runs the command once {@code after} completes; the returned stage completes with it, never exceptionally. */
        CompletableFuture<Void> runAfter(CompletableFuture<Void> after) {
            return after.thenCompose(x -> {
                CompletableFuture<T> sent;
                try {
                    sent = command.get();
                } catch (RuntimeException e) {
                    sent = CompletableFuture.failedFuture(e);
                }
                return sent.whenComplete((r, e) -> {
                    if (e != null) {
                        result.completeExceptionally(e);
                    } else {
                        result.complete(r);
                    }
                }).handle((r, e) -> (Void) null);
            });
        }
    }

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final Executor flushes;
    private final Executor gatheredFlushes;
    /** The connection batches go out on, owned by {@link #loop}; null: through Redisson. */
    private final PipelinedConnection pipelined;
    private final ScheduledExecutorService loop;
    private final long windowNanos;
    /** The gathered flush scheduled on {@link #loop}, which a batch riding along with a {@code SET} cancels. */
    private volatile ScheduledFuture<?> gatheredTimer;
    /** True, on {@link #loop}, while {@link #rideAlong} flushes: the batch is written and the {@code SET} flushes it. */
    private boolean riding;
    /** True where one script may touch every key (not a Redis Cluster): each batch is one {@code FOLLOW_UP} call. */
    private final boolean oneScript;
    private final ConcurrentLinkedQueue<Entry> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** Completes when Redis has answered every batch and read sent so far; guarded by {@code this}, as flushes are. */
    private CompletableFuture<Void> sentSoFar = CompletableFuture.completedFuture(null);
    /**
     * Completes when the next batch may be sent: at once, except after an in-order read, whose later writes wait
     * for it to be answered (and then for each other, so that they reach Redis in the order they were queued).
     * Guarded by {@code this}.
     */
    private CompletableFuture<Void> nextBatchMayGo = CompletableFuture.completedFuture(null);

    /**
     * Sends each batch as soon as {@code flushes} runs it: an event loop gathers one turn's writes; {@code
     * Runnable::run} sends each write as it comes.
     */
    FollowUpWrites(RedissonClient redis, RedisKeys keys, Executor flushes) {
        this(redis, keys, flushes, flushes);
    }

    /**
     * @param flushes         where batches are sent from, and at once where a read must follow the writes
     * @param gatheredFlushes where a batch whose first write was just added is sent from: {@code flushes} after the
     *                        gathering window ({@link #gathered}), so that the writes added meanwhile go with it
     */
    FollowUpWrites(RedissonClient redis, RedisKeys keys, Executor flushes, Executor gatheredFlushes) {
        this(redis, keys, flushes, gatheredFlushes, null, null, 0);
    }

    /**
     * A router's writes in single mode: batches go out on {@code pipelined}, which {@code loop} owns, gathered for
     * {@code window} unless a new session's {@code SET} carries them sooner ({@link #rideAlong}).
     */
    FollowUpWrites(RedissonClient redis, RedisKeys keys, ScheduledExecutorService loop, Duration window,
                   PipelinedConnection pipelined) {
        this(redis, keys, loop, gathered(loop, window), pipelined, window.isZero() ? null : loop, window.toNanos());
    }

    private FollowUpWrites(RedissonClient redis, RedisKeys keys, Executor flushes, Executor gatheredFlushes,
                           PipelinedConnection pipelined, ScheduledExecutorService loop, long windowNanos) {
        this.redis = redis;
        this.keys = keys;
        this.flushes = flushes;
        this.gatheredFlushes = gatheredFlushes;
        this.oneScript = !redis.getConfig().isClusterConfig();
        this.pipelined = oneScript ? pipelined : null;
        this.loop = this.pipelined == null ? null : loop;
        this.windowNanos = windowNanos;
    }

    /**
     * {@code gatheredFlushes} for a store on an event loop: its flushes, {@code window} after the first write; with no
     * window, in the loop's next turn, which still gathers the writes added in the current one.
     */
    static Executor gathered(ScheduledExecutorService loop, Duration window) {
        if (window.isZero()) {
            return loop;
        }
        long nanos = window.toNanos();
        return task -> loop.schedule(task, nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * @param expiry    the session's score in its replica's index: when its binding expires
     * @param announced the binding to announce to the other routers, or null when it is not new
     */
    void add(String sessionId, String replicaId, double expiry, String announced) {
        pending.add(new Entry(sessionId, replicaId, expiry, announced, null));
        if (scheduled.compareAndSet(false, true)) {
            Runnable gatheredFlush = () -> {
                // Cleared before the flush polls: a write added from here on schedules a flush of its own.
                scheduled.set(false);
                flush();
            };
            if (loop == null) {
                submit(gatheredFlushes, gatheredFlush);
            } else {
                try {
                    gatheredTimer = loop.schedule(gatheredFlush, windowNanos, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException stopping) {
                    dropPending();
                }
            }
        }
    }

    /**
     * Called on {@code connection}'s loop just before a new session's {@code SET} goes out on it: writes the batch
     * that waits for its window, unflushed, so that the {@code SET}'s flush sends both in one write. Does nothing on
     * another connection, or when no batch is waiting.
     */
    void rideAlong(PipelinedConnection connection) {
        ScheduledFuture<?> timer = gatheredTimer;
        if (connection != pipelined || timer == null || pending.isEmpty() || !connection.inLoop()
                || !timer.cancel(false)) {
            // Not this connection, nothing gathering, or the window's flush is already running.
            return;
        }
        gatheredTimer = null;
        // As the cancelled flush would have: a write added from here on schedules a flush of its own.
        scheduled.set(false);
        riding = true;
        try {
            flush();
        } finally {
            riding = false;
        }
    }

    /**
     * Runs {@code command} once Redis has answered every write added before this call (or lost it: a failed batch, a
     * stopped loop), and sends no write added after this call until the command's reply is in. The result is the
     * command's own; lost writes never fail it, as the command itself reports a Redis outage better.
     */
    <T> CompletableFuture<T> inOrder(Supplier<CompletableFuture<T>> command) {
        InOrder<T> read = new InOrder<>(command, new CompletableFuture<>());
        pending.add(new Entry(null, null, 0, null, read));
        // At once, with the writes queued before it: a read is never held back by the gathering of writes. A gathered
        // flush still scheduled finds the queue emptier when it runs.
        submit(flushes, this::flush);
        return read.result();
    }

    /** Completes once Redis has answered every write added before this call: {@link #inOrder} with no command. */
    CompletableFuture<Void> answered() {
        return inOrder(() -> CompletableFuture.completedFuture(null));
    }

    private void submit(Executor executor, Runnable flush) {
        try {
            executor.execute(flush);
        } catch (RejectedExecutionException stopping) {
            dropPending();
        }
    }

    /**
     * The event loop is shutting down with the router: pending writes are lost, as an unsent batch would be, and reads
     * run at once, as there is no later write left to keep out of them.
     */
    private void dropPending() {
        for (Entry e; (e = pending.poll()) != null; ) {
            if (e.read() != null) {
                e.read().runAfter(CompletableFuture.completedFuture(null));
            }
        }
        scheduled.set(false);
    }

    private void flush() {
        // One flush at a time: a read must see every batch holding a write queued before it, even one that a flush
        // on another loop thread is still building.
        synchronized (this) {
            List<Entry> writes = new ArrayList<>();
            for (Entry e; writes.size() < MAX_PER_BATCH && (e = pending.poll()) != null; ) {
                if (e.read() == null) {
                    writes.add(e);
                    continue;
                }
                send(writes);
                writes = new ArrayList<>();
                CompletableFuture<Void> read = e.read().runAfter(sentSoFar);
                sentSoFar = read;
                nextBatchMayGo = read;
            }
            send(writes);
        }
        if (!pending.isEmpty()) {
            // More than one batch's worth: the rest goes at once, the next batch's gathering time long past.
            submit(flushes, this::flush);
        }
    }

    /** Sends one batch of writes, now or, after an in-order read, once the read and the batches before are in. */
    private void send(List<Entry> writes) {
        if (writes.isEmpty()) {
            return;
        }
        CompletableFuture<Void> thisBatch;
        if (nextBatchMayGo.isDone()) {
            thisBatch = execute(writes);
        } else {
            thisBatch = nextBatchMayGo.thenCompose(x -> execute(writes));
            nextBatchMayGo = thisBatch;
        }
        sentSoFar = CompletableFuture.allOf(sentSoFar, thisBatch);
    }

    /**
     * One batch: the feed's entries, then the replicas' index writes (one ZADD per replica). Completes when answered
     * or lost.
     */
    private CompletableFuture<Void> execute(List<Entry> writes) {
        Map<String, Map<String, Double>> scores = new LinkedHashMap<>();
        List<Entry> announced = new ArrayList<>();
        for (Entry e : writes) {
            scores.computeIfAbsent(e.replicaId(), r -> new LinkedHashMap<>()).put(e.sessionId(), e.expiry());
            if (e.announced() != null) {
                announced.add(e);
            }
        }
        try {
            CompletableFuture<?> sent = oneScript ? script(scores, announced) : pipeline(scores, announced);
            return sent.handle((r, failed) -> null);
        } catch (RuntimeException clientStopped) {
            // The Redis client shut down with the router while this batch waited for its turn.
            return CompletableFuture.completedFuture(null);
        }
    }

    /**
     * The batch as one call of {@code FOLLOW_UP}: the announcements in one argument, each replica's index writes in
     * one more, as the script reads them ({@link SessionScripts}).
     */
    private CompletableFuture<?> script(Map<String, Map<String, Double>> scores, List<Entry> announced) {
        List<Object> scriptKeys = new ArrayList<>(1 + scores.size());
        scriptKeys.add(keys.bindingFeed());
        List<Object> args = new ArrayList<>(4 + scores.size());
        args.addAll(RedisBindingFeed.announceArgs(keys, messages(announced)));
        scores.forEach((replicaId, members) -> {
            scriptKeys.add(keys.replicaSessions(replicaId));
            StringBuilder pairs = new StringBuilder(members.size() * 52);
            members.forEach((sessionId, expiry) ->
                    pairs.append(score(expiry)).append(' ').append(sessionId).append(' '));
            args.add(pairs.toString());
        });
        if (pipelined != null) {
            return pipelined.script(SessionScripts.FOLLOW_UP, scriptKeys, args, !riding);
        }
        return redis.getScript(StringCodec.INSTANCE).evalAsync(keys.bindingFeed(), RScript.Mode.READ_WRITE,
                SessionScripts.FOLLOW_UP, RScript.ReturnType.LONG, scriptKeys, args.toArray()).toCompletableFuture();
    }

    /**
     * The batch as a pipeline for a Redis Cluster: the announcements in one {@code ANNOUNCE} call, on the stream's
     * key alone, then one ZADD per replica.
     */
    private CompletableFuture<?> pipeline(Map<String, Map<String, Double>> scores, List<Entry> announced) {
        RBatch batch = redis.createBatch();
        if (!announced.isEmpty()) {
            RedisBindingFeed.append(batch, keys, messages(announced));
        }
        scores.forEach((replicaId, members) -> batch.<String>getScoredSortedSet(
                keys.replicaSessions(replicaId), StringCodec.INSTANCE).addAllAsync(members));
        return batch.executeAsync().toCompletableFuture();
    }

    /** The announcements, one message per line, as {@code ANNOUNCE} takes them. */
    private static String messages(List<Entry> announced) {
        StringBuilder messages = new StringBuilder(announced.size() * 64);
        for (Entry e : announced) {
            messages.append(RedisBindingFeed.message(e.sessionId(), e.announced())).append('\n');
        }
        return messages.toString();
    }

    /** A score as ZADD reads it: whole milliseconds without a decimal point, anything else as Java prints it. */
    private static String score(double expiry) {
        return expiry == Math.rint(expiry) && Math.abs(expiry) < 1e15 ? Long.toString((long) expiry)
                : Double.toString(expiry);
    }
}
