package io.scrouter.loadtest.bench;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Binds the known sessions on one server before a benchmark measures them: one request per session, a fixed number
 * in flight, in passes. A session whose request is refused (a Redis call past its deadline on a busy machine answers
 * UNAVAILABLE, which Spark's client retries) is sent again in the next pass, up to {@link #PASSES} passes.
 *
 * <p>Each pass has a queue and a count of its own. The callback that counts a pass's last answer goes on to look
 * for more work; with one queue for every pass, that look could come after the next pass had queued the refused
 * sessions and counted them, take one, and count its answer in the finished pass, so that the next pass waited for
 * it until its time ran out ("1 requests unanswered after 120 s", seen once in about forty two-router runs of
 * {@code bench-profile} whose first pass had refusals).
 */
final class KnownSessionBinder {

    static final int PASSES = 5;
    static final int IN_FLIGHT = 32;
    static final long PASS_SECONDS = 120;

    /** Sends one session's request: completes with null once the server routed it, or with why it refused. */
    interface Sender {
        CompletableFuture<String> send(String session);
    }

    private KnownSessionBinder() {
    }

    /** Binds every session on {@code server} or fails, naming the server and what went wrong. */
    static void bind(String server, List<String> sessions, Sender sender) throws InterruptedException {
        Collection<String> left = sessions;
        Map<String, String> refused = Map.of();
        for (int pass = 0; pass < PASSES && !left.isEmpty(); pass++) {
            Pass p = new Pass(left, sender).start(IN_FLIGHT);
            if (!p.await(PASS_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("binding the known sessions on " + server + ": " + p.unanswered()
                        + " requests unanswered after " + PASS_SECONDS + " s");
            }
            refused = p.refused();
            left = refused.keySet();
        }
        if (!refused.isEmpty()) {
            throw new IllegalStateException("binding the known sessions on " + server + " failed for "
                    + refused.size() + " sessions after " + PASSES + " passes, e.g.: " + refused.values().iterator().next());
        }
    }

    /** One pass: sends each of its sessions once, and counts the answers. */
    static final class Pass {
        private final Queue<String> left;
        private final Sender sender;
        private final CountDownLatch answered;
        private final Map<String, String> refused = new ConcurrentHashMap<>();

        Pass(Collection<String> sessions, Sender sender) {
            this.left = new ConcurrentLinkedQueue<>(new ArrayDeque<>(sessions));
            this.sender = sender;
            this.answered = new CountDownLatch(sessions.size());
        }

        /** Starts {@code inFlight} chains of requests, each sending the next session once the last is answered. */
        Pass start(int inFlight) {
            for (int i = 0; i < inFlight; i++) {
                next();
            }
            return this;
        }

        /** Sends this pass's next session, if any is left. */
        void next() {
            String s = left.poll();
            if (s == null) {
                return;
            }
            CompletableFuture<String> sent;
            try {
                sent = sender.send(s);
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            sent.whenComplete((refusal, error) -> {
                if (error != null) {
                    Throwable cause = error instanceof CompletionException && error.getCause() != null
                            ? error.getCause() : error;
                    refused.put(s, cause.toString());
                } else if (refusal != null) {
                    refused.put(s, refusal);
                }
                answered.countDown();
                next();
            });
        }

        boolean await(long timeout, TimeUnit unit) throws InterruptedException {
            return answered.await(timeout, unit);
        }

        long unanswered() {
            return answered.getCount();
        }

        /** The sessions refused in this pass, each with why; complete once {@link #await} returned true. */
        Map<String, String> refused() {
            return Map.copyOf(refused);
        }
    }
}
