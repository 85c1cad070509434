package io.scrouter.extproc.routing;

import io.grpc.Status;
import io.scrouter.extproc.pool.Replica;

/** What the router answers for one request: a replica to route to, or a rejection the client can act on. */
public sealed interface Decision {

    /** Route to {@code replica}; {@code outcome} says how the replica was found (for metrics and logs). */
    record Route(Replica replica, Outcome outcome) implements Decision {
    }

    /**
     * Refuse the request with gRPC status {@code code}. {@code reason} is a short stable label for metrics;
     * {@code message} goes to the client and says what to do.
     */
    record Reject(Status.Code code, String reason, String message) implements Decision {
    }

    /** How a routed request's replica was determined. */
    enum Outcome {
        /** The session was bound already (near-cache or store). */
        KNOWN,
        /** A new session, placed by the load-aware policy. */
        PLACED,
        /** A new session placed on session counts alone, because no replica had fresh load figures. */
        PLACED_DEGRADED,
        /** The store could not be reached in time: placed by rendezvous hashing, which all routers agree on. */
        FALLBACK
    }
}
