package io.scrouter.extproc.routing;

import io.grpc.Status;

/**
 * Every rejection the router can give, each with a gRPC status the Spark client treats correctly and a
 * message that tells the user what to do. The client-supplied values are never echoed beyond their length:
 * they are untrusted and may hold control characters.
 */
public final class Rejections {

    public static final String EXAMPLE_REMOTE = "sc://<host>:<port>/;session_id=<uuid>;"
            + SessionIds.HEADER + "=<uuid>";

    private Rejections() {
    }

    static Decision.Reject notSparkConnect(String path) {
        return new Decision.Reject(Status.Code.UNIMPLEMENTED, "not_spark_connect",
                "this endpoint routes only Spark Connect RPCs (" + SparkRpc.SERVICE_PREFIX + "<Method>); the request"
                        + " path" + (path == null ? " was missing" : " (" + path.length() + " chars) is not one")
                        + ". Point a Spark Connect client at it");
    }

    public static Decision.Reject missingSessionId() {
        return new Decision.Reject(Status.Code.INVALID_ARGUMENT, "missing_session_id",
                "missing header " + SessionIds.HEADER + ", which this gateway needs to keep your session on "
                        + "one server. Add it to the connection string with the same UUID as session_id: "
                        + EXAMPLE_REMOTE);
    }

    public static Decision.Reject repeatedSessionId(int count) {
        return new Decision.Reject(Status.Code.INVALID_ARGUMENT, "repeated_session_id",
                "header " + SessionIds.HEADER + " appears " + count + " times; send it exactly once, as in "
                        + EXAMPLE_REMOTE);
    }

    public static Decision.Reject malformedSessionId(String value) {
        String what = value.length() > SessionIds.MAX_LENGTH
                ? "is too long (" + value.length() + " chars, at most " + SessionIds.MAX_LENGTH + ")"
                : "is not a UUID (" + value.length() + " chars)";
        return new Decision.Reject(Status.Code.INVALID_ARGUMENT, "malformed_session_id",
                "header " + SessionIds.HEADER + " " + what + "; Spark Connect session ids are UUIDs such as "
                        + "123e4567-e89b-12d3-a456-426614174000, and the header must equal session_id: "
                        + EXAMPLE_REMOTE);
    }

    static Decision.Reject sessionLost(String sessionId, String replicaId) {
        return new Decision.Reject(Status.Code.FAILED_PRECONDITION, "session_lost",
                "session " + sessionId + " lived on Spark Connect replica '" + replicaId + "', which has left the "
                        + "pool; the session's state (temporary views, configs, cached data) is gone with it. "
                        + "Start a new session with a new session_id and " + SessionIds.HEADER);
    }

    static Decision.Reject replicaNotListed(String sessionId, String replicaId) {
        return new Decision.Reject(Status.Code.UNAVAILABLE, "replica_not_listed",
                "session " + sessionId + " lives on Spark Connect replica '" + replicaId + "', which this router "
                        + "does not know yet (the replica list may be re-registering after a restart of the "
                        + "session store). Retry in a few seconds; if this persists, check that the replica's "
                        + "publisher is running");
    }

    static Decision.Reject notBound(String sessionId) {
        return new Decision.Reject(Status.Code.NOT_FOUND, "session_not_bound",
                "session " + sessionId + " has no Spark Connect replica: it was released or expired, so there is "
                        + "nothing left to release on it. To keep working, start a new session with a new "
                        + "session_id and " + SessionIds.HEADER);
    }

    /** The store did not answer within its deadline. */
    static Decision.Reject storeTimeout() {
        return new Decision.Reject(Status.Code.UNAVAILABLE, "store_timeout",
                "the session store did not answer in time, so this session's replica could not be looked up; "
                        + "retry the call (Spark's client retries this status by itself)");
    }

    /** The store refused the call (connection lost, failover) or is being skipped after repeated failures. */
    static Decision.Reject storeUnreachable() {
        return new Decision.Reject(Status.Code.UNAVAILABLE, "store_unreachable",
                "the session store cannot be reached right now, so this session's replica could not be looked up; "
                        + "retry the call (Spark's client retries this status by itself)");
    }

    /** Just after an outage or a data loss: the store may not hold a live session yet, its router is writing it. */
    static Decision.Reject storeSettling() {
        return new Decision.Reject(Status.Code.UNAVAILABLE, "store_settling",
                "the session store is recovering from an outage and may not list this session yet; retry the call "
                        + "(Spark's client retries this status by itself)");
    }

    static Decision.Reject noReadyReplica(int poolSize) {
        return new Decision.Reject(Status.Code.UNAVAILABLE, "no_ready_replica",
                "no Spark Connect replica can take a new session right now (" + poolSize + " known, none ready: "
                        + "all are warming, draining or absent). Retry shortly; if it persists, check that replicas "
                        + "are running and published as ready");
    }

    /** A body message larger than the router accepts: only a gateway with an unbounded body buffer sends one. */
    public static Decision.Reject bodyTooLarge(int bytes, int maxBytes) {
        return new Decision.Reject(Status.Code.RESOURCE_EXHAUSTED, "body_too_large",
                "the request has no " + SessionIds.HEADER + " header, and the gateway sent " + bytes
                        + " bytes of its body at once, more than the router accepts (" + maxBytes + "). Add "
                        + SessionIds.HEADER + " to the connection string with the same UUID as session_id: "
                        + EXAMPLE_REMOTE + ". Operators: bound Envoy's initial_stream_window_size to the router's "
                        + "server.maxBufferedBodyBytes (see envoy/README.md)");
    }
}
