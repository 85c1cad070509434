package io.scrouter.scorer;

import java.util.concurrent.CompletableFuture;

/**
 * Reads one replica's current load. Implementations must complete the future (normally or exceptionally)
 * within their own timeout and never block the caller: the pool probes every replica on one schedule.
 */
@FunctionalInterface
public interface LoadProbe {

    CompletableFuture<LoadSample> sample();
}
