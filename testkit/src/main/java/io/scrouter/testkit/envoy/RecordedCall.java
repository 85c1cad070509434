package io.scrouter.testkit.envoy;

import io.grpc.Status;

/**
 * One request as the stand-in handled it, for tests to check affinity and errors.
 *
 * @param method         the Spark Connect method ({@code ExecutePlan}, ...)
 * @param sessionHeader  {@code x-spark-session-id} as ext_proc saw it, or null
 * @param sessionInBody  {@code session_id} (field 1) of the request's first message, read for the record only
 *                       (Envoy never looks into bodies); null if there was none
 * @param routedFromBody the route came on a body answer (a request without the session header)
 * @param upstream       the {@code ip:port} the request was sent to, or null if none was chosen
 * @param routeSource    what named the upstream: {@code header} or {@code metadata}; null without one
 * @param status         the gRPC status the client got
 * @param details        Envoy's response code details for a reply Envoy made itself, else null
 * @param extProcHost    the router endpoint whose {@code Process} stream decided it, or null
 */
public record RecordedCall(String method, String sessionHeader, String sessionInBody, boolean routedFromBody,
                           String upstream, String routeSource, Status.Code status, String description,
                           String details, String extProcHost) {

    /** The session the call belongs to: its header, else the id in its body. */
    public String session() {
        return sessionHeader != null ? sessionHeader : sessionInBody;
    }
}
