package io.scrouter.loadtest.trace;

import java.util.List;
import java.util.function.Consumer;

/**
 * Plays a trace in real time, {@code speed} times faster than recorded: event times are divided by the
 * speed factor. Events are handed to the consumer on the calling thread, in trace order; the consumer
 * must not block for long (hand real work to an executor), or replay falls behind. A replay that falls
 * behind does not skip events: it sends them late and counts how late in {@link #maxLagMillis()}.
 */
public final class Replay {

    private final double speed;
    private long maxLagMillis;

    public Replay(double speed) {
        if (!(speed > 0)) {
            throw new IllegalArgumentException("speed factor must be positive, got " + speed);
        }
        this.speed = speed;
    }

    public void play(List<? extends TraceEvent> events, Consumer<TraceEvent> consumer) throws InterruptedException {
        long startNanos = System.nanoTime();
        for (TraceEvent e : events) {
            long dueNanos = startNanos + (long) (e.atMillis() * 1_000_000.0 / speed);
            long wait = dueNanos - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            } else {
                maxLagMillis = Math.max(maxLagMillis, -wait / 1_000_000);
            }
            consumer.accept(e);
        }
    }

    /** Wall-clock time of trace time {@code traceMillis} after the start, in scaled milliseconds. */
    public double scaled(long traceMillis) {
        return traceMillis / speed;
    }

    public long maxLagMillis() {
        return maxLagMillis;
    }
}
