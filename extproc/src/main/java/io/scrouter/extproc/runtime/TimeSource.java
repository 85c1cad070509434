package io.scrouter.extproc.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The router's clocks and its timer. Production uses {@link SystemTime}; tests use a manual one that moves only
 * when told, firing the deadlines that fall due.
 */
public interface TimeSource {

    /** Wall-clock milliseconds: shared with other routers through the store (expiry scores), so never monotonic. */
    long millis();

    /** Monotonic nanoseconds, for latencies and the near-cache's expiry. */
    long nanoTime();

    /**
     * Fails {@code call} with a {@link java.util.concurrent.TimeoutException} unless it completes within
     * {@code millis}, and returns it. The call itself is not cancelled at the source (Redis may still run it).
     */
    <T> CompletableFuture<T> within(CompletableFuture<T> call, long millis);

    /**
     * Where work that follows a call made on this thread should run: the event loop this thread is, so that the
     * deadlines it sets there are that loop's ({@link SystemTime#onLoops}); elsewhere, the thread that completes
     * the call.
     */
    default Executor callersLoop() {
        return Runnable::run;
    }
}
