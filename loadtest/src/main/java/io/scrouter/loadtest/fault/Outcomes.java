package io.scrouter.loadtest.fault;

import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.routing.Decision;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One router's decisions as the service itself labels them (known, placed, fallback, rejected), stamped with
 * the time they were answered. A routed PLACED outcome means the router's {@code SET NX} reached Redis, which
 * is how the tools tell when a router writes to Redis again after a fault.
 */
final class Outcomes implements DecisionObserver {

    record Observed(long atNanos, String outcome) {
    }

    private final ConcurrentLinkedQueue<Observed> seen = new ConcurrentLinkedQueue<>();

    @Override
    public void decided(Decision decision, long elapsedNanos, boolean clientSetUpstream) {
        String label = decision instanceof Decision.Route route ? route.outcome().name().toLowerCase()
                : "rejected:" + ((Decision.Reject) decision).reason();
        seen.add(new Observed(System.nanoTime(), label));
    }

    /** When this router first answered {@code outcome} at or after {@code fromNanos}; Long.MAX_VALUE if never. */
    long first(String outcome, long fromNanos) {
        return seen.stream().filter(o -> o.atNanos() >= fromNanos && o.outcome().equals(outcome))
                .mapToLong(Observed::atNanos).min().orElse(Long.MAX_VALUE);
    }

    /** How many decisions in [fromNanos, toNanos) had {@code outcome}. */
    long count(String outcome, long fromNanos, long toNanos) {
        return seen.stream().filter(o -> o.atNanos() >= fromNanos && o.atNanos() < toNanos
                && o.outcome().equals(outcome)).count();
    }
}
