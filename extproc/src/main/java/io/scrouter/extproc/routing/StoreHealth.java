package io.scrouter.extproc.routing;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small circuit breaker in front of the shared store. After a few consecutive failures the router stops
 * waiting on the store for a cool-down and uses its fallback at once, so a hung Redis costs each decision
 * nothing instead of a full timeout; one trial call per cool-down finds out when it is back.
 */
public final class StoreHealth {

    private final int failuresToOpen;
    private final long coolDownMillis;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final AtomicLong openUntilMillis = new AtomicLong(Long.MIN_VALUE);

    public StoreHealth(int failuresToOpen, long coolDownMillis) {
        this.failuresToOpen = failuresToOpen;
        this.coolDownMillis = coolDownMillis;
    }

    /** True if a call should be attempted now. While open, lets one trial through per cool-down. */
    public boolean shouldTry(long nowMillis) {
        long until = openUntilMillis.get();
        if (until == Long.MIN_VALUE || nowMillis >= until && openUntilMillis.compareAndSet(until,
                nowMillis + coolDownMillis)) {
            return true;
        }
        return false;
    }

    public void success() {
        consecutiveFailures.set(0);
        openUntilMillis.set(Long.MIN_VALUE);
    }

    public void failure(long nowMillis) {
        if (consecutiveFailures.incrementAndGet() >= failuresToOpen) {
            openUntilMillis.accumulateAndGet(nowMillis + coolDownMillis,
                    (cur, next) -> cur == Long.MIN_VALUE ? next : cur);
        }
    }

    public boolean isOpen() {
        return openUntilMillis.get() != Long.MIN_VALUE;
    }
}
