package io.scrouter.extproc.runtime;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The system clocks, and deadlines.
 *
 * <p>A deadline set on one of the router's event loops ({@link #onLoops}) is kept by that loop, after its reads:
 * when it falls due the loop first reads its sockets once more, and only a call still unanswered then fails. The
 * loop that waits on a Redis reply is the loop that reads it ({@link IoLoops}), so a reply that arrived while the
 * router was stalled (a GC pause, a backlog of work on the loop) is taken as the answer it is, instead of losing a
 * race against a timer thread that the stall did not hold up. A router that takes its own pauses for Redis
 * timeouts opens its breaker and places sessions by rendezvous while Redis is answering in well under a
 * millisecond.
 *
 * <p>Deadlines set elsewhere (maintenance threads, tests) run on one daemon timer thread of the router's own
 * (rather than the JDK's hidden {@code CompletableFuture} delayer), whose cancelled timers are removed at once:
 * nearly every deadline is cancelled, because nearly every store call answers in time.
 */
public final class SystemTime implements TimeSource {

    private static final SystemTime SHARED = new SystemTime(List.of());
    private static final ScheduledThreadPoolExecutor TIMER = timer();

    /** The loops whose deadlines they keep themselves; empty: all on the timer thread. */
    private final EventExecutor[] loops;

    private SystemTime(List<EventExecutor> loops) {
        this.loops = loops.toArray(EventExecutor[]::new);
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("scrouter-deadlines"));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** Deadlines on the timer thread only. Its thread is a daemon and lives as long as the process. */
    public static SystemTime shared() {
        return SHARED;
    }

    /** The system clocks, with deadlines set on one of {@code group}'s loops kept by that loop. */
    public static SystemTime onLoops(EventLoopGroup group) {
        List<EventExecutor> loops = new ArrayList<>();
        group.forEach(loops::add);
        return new SystemTime(loops);
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
        EventExecutor loop = currentLoop();
        Future<?> expiry = loop == null
                ? TIMER.schedule(() -> expire(call, millis), millis, TimeUnit.MILLISECONDS)
                : loop.schedule(() -> expireAfterNextRead(loop, call, millis), millis, TimeUnit.MILLISECONDS);
        call.whenComplete((value, error) -> expiry.cancel(false));
        return call;
    }

    @Override
    public Executor callersLoop() {
        EventExecutor loop = currentLoop();
        return loop != null ? loop : Runnable::run;
    }

    private EventExecutor currentLoop() {
        for (EventExecutor loop : loops) {
            if (loop.inEventLoop()) {
                return loop;
            }
        }
        return null;
    }

    /**
     * Due, on the loop: fail the call on the loop's next round of tasks, which it starts only after reading its
     * sockets (Netty's {@code SingleThreadIoEventLoop.run}: I/O, then the tasks due, fetched once per round). A
     * task scheduled now is not fetched in the round that is running it.
     */
    private static <T> void expireAfterNextRead(EventExecutor loop, CompletableFuture<T> call, long millis) {
        if (!call.isDone()) {
            loop.schedule(() -> expire(call, millis), 0, TimeUnit.NANOSECONDS);
        }
    }

    private static <T> void expire(CompletableFuture<T> call, long millis) {
        call.completeExceptionally(new TimeoutException("no answer within " + millis + " ms"));
    }
}
