package io.scrouter.extproc.publisher;

import java.util.concurrent.CompletableFuture;

/** Whether the Spark Connect server beside the publisher can serve. Must complete within its own timeout. */
@FunctionalInterface
public interface ReadinessCheck {

    /**
     * Which driver answered the last successful check (its Spark application id), or null if unknown. A new
     * value means the driver restarted: routers then treat the replica's sessions as gone.
     */
    default String instance() {
        return null;
    }

    /** Completes with null when ready, or with the reason it is not. Never completes exceptionally. */
    CompletableFuture<String> notReadyReason();
}
