package io.scrouter.extproc.redis;

import io.scrouter.extproc.session.BindingFeed;
import org.redisson.api.RStream;
import org.redisson.api.RBatch;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamAddArgs;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.api.stream.StreamReadArgs;
import org.redisson.client.codec.StringCodec;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

/**
 * The binding feed in Redis: the session store announces each new binding on a channel and appends it to a
 * stream ({@link #append}); routers listen on the channel and read the stream from the last position seen on
 * every pool poll.
 *
 * <p>Why both: the channel delivers within milliseconds, which matters for a session created just before Redis
 * hangs (until its router's peers know it, a request that reaches them while Redis is away is placed afresh).
 * But a router whose connection dropped misses every message sent meanwhile, and those are exactly the sessions
 * it would later place differently from the router that created them. The stream is read from the last position
 * seen, so nothing announced while it is retained is missed, and a router that starts reads the retained
 * history. Each covers the other's gap; duplicates are harmless.
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
    private volatile StreamMessageId position = new StreamMessageId(0, 0);

    public RedisBindingFeed(RedissonClient redis, RedisKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** One announcement as the channel and the stream carry it: {@code <session> <replica>}. */
    static String message(String sessionId, String replica) {
        return sessionId + " " + replica;
    }

    /** Adds the announcement of a new binding to {@code batch}: the store sends it with the binding's index write. */
    static void append(RBatch batch, RedisKeys keys, String sessionId, String replica) {
        String message = message(sessionId, replica);
        batch.getTopic(keys.bindingChannel(), StringCodec.INSTANCE).publishAsync(message);
        batch.<String, String>getStream(keys.bindingFeed(), StringCodec.INSTANCE).addAsync(
                StreamAddArgs.entry(FIELD, message).trimNonStrict().maxLen(RETAINED).noLimit());
    }

    /**
     * Reads what was announced since the last read, in reads of at most {@link #READ_BATCH} entries back to back
     * until one comes back short; at most one catch-up is in flight.
     */
    @Override
    public void catchUp(BiConsumer<String, String> sessionAndReplica) {
        listenLive(sessionAndReplica);
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
                    .addListenerAsync(String.class, (channel, message) -> deliver(message, sessionAndReplica))
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

    private void deliver(Map<StreamMessageId, Map<String, String>> entries,
                         BiConsumer<String, String> sessionAndReplica) {
        StreamMessageId last = position;
        for (Map.Entry<StreamMessageId, Map<String, String>> entry : entries.entrySet()) {
            deliver(entry.getValue().get(FIELD), sessionAndReplica);
            StreamMessageId id = entry.getKey();
            if (id.getId0() > last.getId0() || id.getId0() == last.getId0() && id.getId1() > last.getId1()) {
                last = id;
            }
        }
        position = last;
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
