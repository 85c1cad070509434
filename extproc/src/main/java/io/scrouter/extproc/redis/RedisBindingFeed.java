package io.scrouter.extproc.redis;

import io.scrouter.extproc.session.BindingFeed;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RStream;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.api.stream.StreamReadArgs;
import org.redisson.client.codec.StringCodec;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;

/**
 * The binding feed in Redis: the session store appends each new binding to a stream and announces each batch of
 * them on a channel ({@code SessionScripts.ANNOUNCE}); routers listen on the channel and read the stream from the
 * last position heard on every pool poll.
 *
 * <p>Why both: the channel delivers within milliseconds, which matters for a session created just before Redis
 * hangs (until its router's peers know it, a request that reaches them while Redis is away is placed afresh).
 * But a router whose connection dropped misses every message sent meanwhile, and those are exactly the sessions
 * it would later place differently from the router that created them. The stream is read from the last position
 * heard, so nothing announced while it is retained is missed, and a router that starts reads the retained
 * history. Each covers the other's gap; duplicates are harmless.
 *
 * <p>The position: every entry up to it has been delivered. A stream read moves it to the last entry read. A batch
 * heard on the channel names the stream's last entry before it and the entry it gave each announcement; the script
 * that wrote them is atomic, so if the position had reached that entry before, the batch holds every entry up to
 * its own last, and the position moves there. A router that hears every batch therefore finds nothing new on its
 * poll's read. When each read also delivered every announcement the channel had carried, handing those entries to
 * the near-cache held the event loop that answers Envoy for a millisecond at a time: a quarter to a third of two
 * routers' new-session p99 with the follow-up batches coalesced (loadtest/README.md, "The follow-up batch sent with
 * the next {@code SET}"; as built, "The feed's stream reads: each batch heard with its stream ids").
 *
 * <p>A batch whose entry before lies past the position means the channel missed something (a dropped subscription,
 * or a writer that does not announce batches, such as an earlier version of the router during a rollout): the
 * stream is read at once from the position. A drop the router never notices costs nothing either: the position
 * stays where it was, and the next poll's read delivers what the channel missed.
 */
public final class RedisBindingFeed implements BindingFeed {

    /** Entries kept in the stream (approximately): enough for every session started in a long outage. */
    static final int RETAINED = 200_000;
    /**
     * Entries per read at most: a reply of about 60 KB, decoded in a few milliseconds. Every read must finish
     * within the Redis deadline ({@code redis.timeout}, 50 ms by default), and one read holds the event loop that
     * also answers Envoy while it is decoded. A reply that misses the deadline is read to its end all the same
     * and thrown away, and the read starts again from the same position: reads of 20,000 entries (1.3 MB) often
     * missed it on a busy core, and a router that fell that far behind stayed behind, poll after poll, its event
     * loop decoding replies it then discarded (loadtest/README.md, "The binding feed's reads").
     */
    static final int READ_BATCH = 1_000;
    /** A read that missed the deadline is retried half as large, down to this. */
    static final int MIN_READ_BATCH = 50;
    /** Reads back to back in one catch-up at most (100,000 entries); the next poll goes on from there. */
    static final int MAX_READS_PER_CATCH_UP = 100;
    static final String FIELD = "b";

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final AtomicBoolean readRunning = new AtomicBoolean();
    /** Entries asked for by the next read: halved after a read that failed, doubled back after one that did not. */
    private volatile int readBatch = READ_BATCH;
    /** The channel's subscription: null when not subscribed, so the next poll tries again. */
    private final AtomicReference<CompletableFuture<Integer>> live = new AtomicReference<>();
    /** Every entry up to this one has been delivered. Read anywhere; moved only forward, under {@code this}. */
    private volatile StreamMessageId position = new StreamMessageId(0, 0);
    /** Entries delivered from stream reads, not from the channel. */
    private final LongAdder entriesRead = new LongAdder();

    public RedisBindingFeed(RedissonClient redis, RedisKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** One announcement as the channel and the stream carry it: {@code <session> <replica>}. */
    static String message(String sessionId, String replica) {
        return sessionId + " " + replica;
    }

    /**
     * The arguments of {@code SessionScripts.ANNOUNCE}, and the first four of {@code FOLLOW_UP}: {@code messages}
     * holds one {@link #message} per line.
     */
    static List<Object> announceArgs(RedisKeys keys, String messages) {
        return List.of(keys.bindingChannel(), Integer.toString(RETAINED), FIELD, messages);
    }

    /**
     * Adds one batch of announcements ({@code messages}, one {@link #message} per line) to {@code batch}: one call
     * of {@code SessionScripts.ANNOUNCE}, which touches the stream's key alone, as a Redis Cluster requires.
     */
    static void append(RBatch batch, RedisKeys keys, String messages) {
        batch.getScript(StringCodec.INSTANCE).evalAsync(keys.bindingFeed(), RScript.Mode.READ_WRITE,
                SessionScripts.ANNOUNCE, RScript.ReturnType.LONG, List.of(keys.bindingFeed()),
                announceArgs(keys, messages).toArray());
    }

    /**
     * Reads what was announced since the last read, in reads of at most {@link #READ_BATCH} entries back to back
     * until one comes back short; at most one catch-up is in flight.
     */
    @Override
    public void catchUp(BiConsumer<String, String> sessionAndReplica) {
        listenLive(sessionAndReplica);
        startRead(sessionAndReplica);
    }

    /** Entries delivered from the stream so far; the channel delivered the rest. */
    long entriesRead() {
        return entriesRead.sum();
    }

    /** Reads the stream from the position unless a read is already under way. */
    private void startRead(BiConsumer<String, String> sessionAndReplica) {
        if (readRunning.compareAndSet(false, true)) {
            read(sessionAndReplica, MAX_READS_PER_CATCH_UP);
        }
    }

    private void read(BiConsumer<String, String> sessionAndReplica, int readsLeft) {
        int asked = readBatch;
        try {
            stream().readAsync(StreamReadArgs.greaterThan(position).count(asked))
                    .toCompletableFuture().whenComplete((entries, error) -> {
                        boolean more = false;
                        try {
                            if (error != null) {
                                readBatch = Math.max(MIN_READ_BATCH, asked / 2);
                            } else if (entries != null) {
                                deliver(entries, sessionAndReplica);
                                readBatch = Math.min(READ_BATCH, asked * 2);
                                more = entries.size() >= asked && readsLeft > 1;
                            }
                        } finally {
                            if (more) {
                                read(sessionAndReplica, readsLeft - 1);
                            } else {
                                readRunning.set(false);
                            }
                        }
                    });
        } catch (RuntimeException e) {
            readRunning.set(false);
        }
    }

    /** Subscribes to the channel unless subscribed; a failed attempt is repeated on the next poll. */
    private void listenLive(BiConsumer<String, String> sessionAndReplica) {
        if (live.get() != null) {
            return;
        }
        CompletableFuture<Integer> attempt = new CompletableFuture<>();
        if (!live.compareAndSet(null, attempt)) {
            return;
        }
        try {
            redis.getTopic(keys.bindingChannel(), StringCodec.INSTANCE)
                    .addListenerAsync(String.class, (channel, batch) -> heard(batch, sessionAndReplica))
                    .toCompletableFuture().whenComplete((id, error) -> {
                        if (error != null) {
                            live.compareAndSet(attempt, null);
                        } else {
                            attempt.complete(id);
                        }
                    });
        } catch (RuntimeException e) {
            live.compareAndSet(attempt, null);
        }
    }

    /**
     * One batch heard on the channel: the stream's last entry before it on the first line, then {@code <entry id>
     * <session> <replica>} per line ({@code SessionScripts.ANNOUNCE}). Delivers every announcement, then moves the
     * position to the batch's last entry, or, if the batch does not start where the position stands, reads the
     * stream at once. A read already under way when the gap is found may end short of it: the next poll's read
     * delivers the rest.
     */
    private void heard(String batch, BiConsumer<String, String> sessionAndReplica) {
        int end = batch.indexOf('\n');
        if (end < 0) {
            return;
        }
        StreamMessageId before = streamId(batch.substring(0, end));
        StreamMessageId last = null;
        for (int from = end + 1; from < batch.length(); from = end + 1) {
            end = batch.indexOf('\n', from);
            if (end < 0) {
                end = batch.length();
            }
            int space = batch.indexOf(' ', from);
            if (space < 0 || space >= end) {
                continue;
            }
            deliver(batch.substring(space + 1, end), sessionAndReplica);
            StreamMessageId id = streamId(batch.substring(from, space));
            if (id != null && (last == null || after(id, last))) {
                last = id;
            }
        }
        if (!extend(before, last)) {
            startRead(sessionAndReplica);
        }
    }

    /**
     * Moves the position to {@code last} if every entry after {@code before} up to {@code last} has just been
     * delivered and the position had reached {@code before}; false when it had not (or {@code before} is unknown),
     * so that entries between them may have been missed.
     */
    private synchronized boolean extend(StreamMessageId before, StreamMessageId last) {
        if (before == null || after(before, position)) {
            return false;
        }
        if (last != null) {
            moveTo(last);
        }
        return true;
    }

    /** Delivers the entries of one stream read and moves the position to the last of them. */
    private void deliver(Map<StreamMessageId, Map<String, String>> entries,
                         BiConsumer<String, String> sessionAndReplica) {
        StreamMessageId last = null;
        for (Map.Entry<StreamMessageId, Map<String, String>> entry : entries.entrySet()) {
            deliver(entry.getValue().get(FIELD), sessionAndReplica);
            StreamMessageId id = entry.getKey();
            if (last == null || after(id, last)) {
                last = id;
            }
        }
        entriesRead.add(entries.size());
        if (last != null) {
            moveTo(last);
        }
    }

    /** Moves the position forward to {@code last}, every entry up to which has now been delivered. */
    private synchronized void moveTo(StreamMessageId last) {
        if (after(last, position)) {
            position = last;
        }
    }

    private static boolean after(StreamMessageId a, StreamMessageId b) {
        return a.getId0() > b.getId0() || a.getId0() == b.getId0() && a.getId1() > b.getId1();
    }

    /** A stream entry id, {@code <ms>-<seq>}; null for anything else ('-': Redis refused the entry). */
    private static StreamMessageId streamId(String text) {
        int dash = text.indexOf('-');
        if (dash <= 0 || dash == text.length() - 1) {
            return null;
        }
        try {
            return new StreamMessageId(Long.parseUnsignedLong(text.substring(0, dash)),
                    Long.parseUnsignedLong(text.substring(dash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** One announcement, {@code <session> <replica>}; anything else is skipped. */
    private static void deliver(String message, BiConsumer<String, String> sessionAndReplica) {
        int space = message == null ? -1 : message.indexOf(' ');
        if (space > 0) {
            sessionAndReplica.accept(message.substring(0, space), message.substring(space + 1));
        }
    }

    private RStream<String, String> stream() {
        return redis.getStream(keys.bindingFeed(), StringCodec.INSTANCE);
    }
}
