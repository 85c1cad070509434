package io.scrouter.extproc.envoy;

import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Request;

import java.util.concurrent.CompletableFuture;

/**
 * Decides where one Spark Connect request goes. The only thing a {@link ProcessStream} needs from the rest of
 * the service, so the Envoy side can be tested without a store or a pool.
 */
@FunctionalInterface
public interface Decider {

    /**
     * @param request what the decision reads from the request
     * @return the decision; may complete on another thread, must not block the caller
     */
    CompletableFuture<Decision> decide(Request request);
}
