package io.scrouter.extproc.testing;

import io.scrouter.extproc.runtime.TimeSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * Time that moves only when a test says so. Deadlines set with {@link #within} fail their call when
 * {@link #advance} passes them, on the test's thread, so a test of the decision path needs no sleeping and no
 * polling.
 */
public final class ManualTime implements TimeSource {

    private record Deadline(long atNanos, CompletableFuture<?> call, long millis) {
    }

    private long nanos;
    private final long epochMillis;
    private final List<Deadline> deadlines = new ArrayList<>();

    /** Starts at a fixed wall-clock instant, so that stored expiry scores are the same in every run. */
    public ManualTime() {
        this(1_700_000_000_000L);
    }

    public ManualTime(long epochMillis) {
        this.epochMillis = epochMillis;
    }

    @Override
    public synchronized long millis() {
        return epochMillis + nanos / 1_000_000;
    }

    @Override
    public synchronized long nanoTime() {
        return nanos;
    }

    @Override
    public synchronized <T> CompletableFuture<T> within(CompletableFuture<T> call, long millis) {
        if (!call.isDone()) {
            deadlines.add(new Deadline(nanos + millis * 1_000_000, call, millis));
        }
        return call;
    }

    /** Moves time forward, then fails every call whose deadline has passed and that has not completed. */
    public void advance(Duration by) {
        List<Deadline> due = new ArrayList<>();
        synchronized (this) {
            nanos += by.toNanos();
            deadlines.removeIf(d -> {
                if (d.call().isDone()) {
                    return true;
                }
                if (d.atNanos() <= nanos) {
                    due.add(d);
                    return true;
                }
                return false;
            });
        }
        // Outside the lock: completing a call runs its callbacks, which may set new deadlines.
        for (Deadline d : due) {
            d.call().completeExceptionally(new TimeoutException("no answer within " + d.millis() + " ms"));
        }
    }

    /** Deadlines set and neither passed nor answered yet. */
    public synchronized int pendingDeadlines() {
        deadlines.removeIf(d -> d.call().isDone());
        return deadlines.size();
    }
}
