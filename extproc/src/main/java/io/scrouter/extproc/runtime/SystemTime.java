package io.scrouter.extproc.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The system clocks, and deadlines on one daemon timer thread of the router's own (rather than the JDK's
 * hidden {@code CompletableFuture} delayer), whose cancelled timers are removed at once: nearly every deadline
 * is cancelled, because nearly every store call answers in time.
 */
public final class SystemTime implements TimeSource {

    private static final SystemTime SHARED = new SystemTime();

    private final ScheduledThreadPoolExecutor timer;

    private SystemTime() {
        timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("scrouter-deadlines"));
        timer.setRemoveOnCancelPolicy(true);
    }

    /** The process's one instance: its timer thread is a daemon and lives as long as the process. */
    public static SystemTime shared() {
        return SHARED;
    }

    @Override
    public long millis() {
        return System.currentTimeMillis();
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public <T> CompletableFuture<T> within(CompletableFuture<T> call, long millis) {
        if (call.isDone()) {
            return call;
        }
        ScheduledFuture<?> expiry = timer.schedule(() -> call.completeExceptionally(
                new TimeoutException("no answer within " + millis + " ms")), millis, TimeUnit.MILLISECONDS);
        call.whenComplete((value, error) -> expiry.cancel(false));
        return call;
    }
}
