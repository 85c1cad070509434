package io.scrouter.extproc.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits, bounded, for a condition that background loops make true. The bound comes from the configuration
 * under test (see {@link Patience}); it is never used to assert a duration.
 */
public final class Await {

    private Await() {
    }

    /** Returns once {@code condition} holds; fails after {@code within}. */
    public static void until(String what, Duration within, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + within.toMillis() + " ms waiting for " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what);
            }
        }
    }

    /** A condition that may throw (a Redis read, a request): a throw counts as "not yet". */
    @FunctionalInterface
    public interface Check {
        boolean holds() throws Exception;
    }

    /** Like {@link #until(String, Duration, BooleanSupplier)}, for a check that talks to a process. */
    public static void untilChecked(String what, Duration within, Check check) {
        until(what, within, () -> {
            try {
                return check.holds();
            } catch (Exception notYet) {
                return false;
            }
        });
    }
}
