package io.scrouter.extproc.envoy;

import io.scrouter.extproc.routing.Decision;

import java.util.concurrent.CompletableFuture;

/**
 * Decides where one Spark Connect request goes. The only thing a {@link ProcessStream} needs from the rest of
 * the service, so the Envoy side can be tested without a store or a pool.
 */
@FunctionalInterface
public interface Decider {

    /**
     * @param path      the request's {@code :path}
     * @param sessionId the session id from the header or the body, or null when there is none
     * @return the decision; may complete on another thread, must not block the caller
     */
    CompletableFuture<Decision> decide(String path, String sessionId);
}
