package io.scrouter.extproc.routing;

import io.scrouter.extproc.runtime.TimeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Every call to the session store goes through here: under the store deadline, and on the request path with
 * one retry and the circuit breaker's bookkeeping. One request that fails records exactly one failure, and
 * the breaker opening is logged once, as a WARN that says what the router does meanwhile.
 *
 * <p>Only request-path calls count as failures: a burst of background work (idle-timer pushes, write-backs)
 * can never make the router believe in an outage of its own making. Any call that succeeds closes the breaker.
 */
public final class GuardedStore {

    private static final Logger LOG = LoggerFactory.getLogger(GuardedStore.class);

    private final StoreHealth health;
    private final TimeSource time;
    private final long timeoutMillis;
    private final long settleMillis;
    /** When a request-path call last failed; placement settles on rendezvous for a while after it. */
    private volatile long failedAtMillis = Long.MIN_VALUE;

    GuardedStore(StoreHealth health, TimeSource time, RouterSettings settings) {
        this.health = health;
        this.time = time;
        this.timeoutMillis = settings.storeTimeoutMillis();
        this.settleMillis = settings.settleMillis();
    }

    /** True if a request-path call should be made now; while the breaker is open, one trial per cool-down. */
    boolean mayCall() {
        return health.shouldTry(time.millis());
    }

    /**
     * A request-path call: under the deadline, and once more if the first attempt failed otherwise than by running
     * out of it (a dropped connection, a failover in progress). An attempt past the router's deadline is not
     * repeated: the store is slow or hung, and a second wait would only double the decision's latency. The outcome
     * is recorded once.
     *
     * <p>The Redis client's own timeout, a backstop well behind the deadline ({@code RedisClients.backstopMillis}),
     * fails an attempt first only when the event loop that keeps the deadline was held up for longer than the
     * backstop: a long GC pause. Its timer thread runs on through the pause and fails the command although the
     * reply may be waiting in the socket, and taken as a store failure it opened the breaker and put placement on
     * rendezvous for the settle window while Redis was answering at once. That attempt is repeated, on the loop the
     * call was made on, so that the retry's deadline is kept by the loop that reads its reply. Every request-path
     * call may be repeated: a find reads, and a find-or-bind whose first attempt bound the session finds that
     * binding.
     */
    <T> CompletableFuture<T> onRequestPath(Supplier<CompletableFuture<T>> call) {
        return time.within(call.get(), timeoutMillis)
                .exceptionallyComposeAsync(first -> pastDeadline(first) ? CompletableFuture.failedFuture(first)
                        : time.within(call.get(), timeoutMillis), time.callersLoop())
                .whenComplete((value, error) -> {
                    if (error == null) {
                        health.success();
                    } else {
                        failed(error);
                    }
                });
    }

    /** A background call under the store deadline: its failure is the caller's to retry, and not counted. */
    <T> CompletableFuture<T> inBackground(CompletableFuture<T> call) {
        return inBackground(call, timeoutMillis);
    }

    /** A background call under a deadline of its own (marking a replica's sessions lost touches many keys). */
    <T> CompletableFuture<T> inBackground(CompletableFuture<T> call, long deadlineMillis) {
        return time.within(call, deadlineMillis).whenComplete((value, error) -> {
            if (error == null) {
                health.success();
            }
        });
    }

    private void failed(Throwable error) {
        long now = time.millis();
        failedAtMillis = now;
        boolean wasOpen = health.isOpen();
        health.failure(now);
        if (!wasOpen && health.isOpen()) {
            LOG.atWarn().setMessage("session store unreachable; new sessions are placed by rendezvous hashing and "
                    + "known sessions keep their replica until it is back. Check Redis and the network to it")
                    .addKeyValue("error", error.toString()).log();
        }
    }

    /** True while request-path calls are skipped after repeated failures. */
    public boolean breakerOpen() {
        return health.isOpen();
    }

    /** True shortly after a request-path call failed: the window in which routers may disagree about the store. */
    boolean recentlyFailed() {
        long failed = failedAtMillis;
        return failed != Long.MIN_VALUE && time.millis() - failed < settleMillis;
    }

    /** Starts the settle window without a failed call (the store lost its data). */
    void startSettling() {
        failedAtMillis = time.millis();
    }

    /** The rejection for a request whose store call failed: a timeout and a refused call say different things. */
    static Decision.Reject unanswered(Throwable error) {
        return isTimeout(error) ? Rejections.storeTimeout() : Rejections.storeUnreachable();
    }

    /** True if the call ran out of the router's own deadline ({@link TimeSource#within}). */
    static boolean pastDeadline(Throwable error) {
        return anyCause(error, t -> t instanceof TimeoutException);
    }

    /** True for the router's deadline and for the Redis client's own timeouts alike: the store did not answer. */
    static boolean isTimeout(Throwable error) {
        return anyCause(error, t -> t instanceof TimeoutException || t.getClass().getSimpleName().contains("Timeout"));
    }

    private static boolean anyCause(Throwable error, Predicate<Throwable> test) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (test.test(t)) {
                return true;
            }
        }
        return false;
    }
}
