package io.scrouter.extproc.testing;

import java.util.function.BooleanSupplier;

/** Waits, bounded, for a condition that background loops make true. Never used to assert a duration. */
public final class Await {

    private Await() {
    }

    public static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what);
            }
        }
        throw new AssertionError("timed out after 15 s waiting for " + what);
    }
}
