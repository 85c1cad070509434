package io.scrouter.extproc.publisher;

import java.util.concurrent.CompletableFuture;

/** Whether the Spark Connect server beside the publisher can serve. Must complete within its own timeout. */
@FunctionalInterface
public interface ReadinessCheck {

    /** Completes with null when ready, or with the reason it is not. Never completes exceptionally. */
    CompletableFuture<String> notReadyReason();
}
