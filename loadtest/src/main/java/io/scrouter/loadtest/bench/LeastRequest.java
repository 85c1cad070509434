package io.scrouter.loadtest.bench;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntUnaryOperator;

/**
 * Spreads streams over servers as Envoy's least-request load balancer does with equal weights: draw
 * {@code choiceCount} servers at random (with replacement), keep the first one drawn unless a later one has
 * strictly fewer requests in flight. Follows {@code LeastRequestLoadBalancer::unweightedHostPickNChoices} in
 * Envoy's {@code source/extensions/load_balancing_policies/least_request/least_request_lb.cc}; the default
 * {@code choice_count} is 2 ({@code least_request.proto}).
 */
final class LeastRequest {

    static final int ENVOY_DEFAULT_CHOICES = 2;

    private final AtomicIntegerArray active;
    private final int choiceCount;

    LeastRequest(int servers, int choiceCount) {
        if (servers < 1 || choiceCount < 1) {
            throw new IllegalArgumentException("need at least one server and one choice, got " + servers + " and "
                    + choiceCount);
        }
        this.active = new AtomicIntegerArray(servers);
        this.choiceCount = choiceCount;
    }

    /** Picks a server and counts one more request in flight on it; {@code random} returns 0..bound-1. */
    int pick(IntUnaryOperator random) {
        int n = active.length();
        int candidate = random.applyAsInt(n);
        for (int i = 1; i < choiceCount; i++) {
            int sampled = random.applyAsInt(n);
            if (active.get(sampled) < active.get(candidate)) {
                candidate = sampled;
            }
        }
        active.incrementAndGet(candidate);
        return candidate;
    }

    /** The request picked on {@code server} is answered. */
    void done(int server) {
        active.decrementAndGet(server);
    }

    int inFlight(int server) {
        return active.get(server);
    }
}
