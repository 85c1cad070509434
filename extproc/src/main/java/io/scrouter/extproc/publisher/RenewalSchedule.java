package io.scrouter.extproc.publisher;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * When the publisher renews its entry: once per {@code interval} while serving; at once when a stop is
 * requested (so routers see {@code draining} within one poll); then once per {@code interval} for
 * {@code drainFor}, and one last time when the drain ends. The number of renewals in a drain is therefore
 * bounded by {@code drainFor / interval + 2}, whatever happens to the stop signal.
 *
 * <p>Why this is a class of its own: the stop signal is a latch, and a released latch returns from every
 * later {@code await} at once. The first version waited on it between renewals during the drain too, so the
 * loop renewed without pause (about 1,900 writes a second). Here the drain waits with {@link Pause#sleep},
 * which does not look at the latch, and time is injected so tests count renewals without sleeping.
 */
final class RenewalSchedule {

    /** Waits between renewals. Production uses the stop latch and {@link Thread#sleep}; tests a fake clock. */
    interface Pause {
        /** Waits up to {@code nanos}; true if a stop was requested (now or earlier). */
        boolean untilStopRequested(long nanos) throws InterruptedException;

        /** Waits {@code nanos} whatever the stop signal says. */
        void sleep(long nanos) throws InterruptedException;
    }

    private final Runnable renew;
    private final long intervalNanos;
    private final long drainNanos;
    private final LongSupplier nanoClock;
    private final Pause pause;

    RenewalSchedule(Runnable renew, Duration interval, Duration drainFor, LongSupplier nanoClock, Pause pause) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, got " + interval);
        }
        if (drainFor.isNegative()) {
            throw new IllegalArgumentException("drainFor must not be negative, got " + drainFor);
        }
        this.renew = renew;
        this.intervalNanos = interval.toNanos();
        this.drainNanos = drainFor.toNanos();
        this.nanoClock = nanoClock;
        this.pause = pause;
    }

    /** The production pause: the stop latch while serving, a plain sleep while draining. */
    static Pause onLatch(CountDownLatch stop) {
        return new Pause() {
            @Override
            public boolean untilStopRequested(long nanos) throws InterruptedException {
                return stop.await(nanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public void sleep(long nanos) throws InterruptedException {
                TimeUnit.NANOSECONDS.sleep(nanos);
            }
        };
    }

    /** Renews until a stop is requested and {@code drainFor} has passed since; returns the renewals made. */
    long run() throws InterruptedException {
        long renewals = 0;
        long drainEnds = 0;
        boolean draining = false;
        while (true) {
            renew.run();
            renewals++;
            if (!draining) {
                if (pause.untilStopRequested(intervalNanos)) {
                    draining = true;
                    drainEnds = nanoClock.getAsLong() + drainNanos;
                }
                continue;
            }
            long left = drainEnds - nanoClock.getAsLong();
            if (left <= 0) {
                return renewals;
            }
            pause.sleep(Math.min(left, intervalNanos));
        }
    }
}
