package io.scrouter.testkit.envoy;

import io.grpc.Status;

/**
 * A reply Envoy makes itself, as a gRPC client sees it: trailers-only, {@code :status 200}, {@code grpc-status}
 * either given or mapped from the HTTP code, and the body as {@code grpc-message}
 * ({@code source/common/http/utility.cc}, {@code Utility::prepareLocalReply}).
 *
 * @param httpCode  the HTTP status Envoy chose (500, 503, 504...), kept for the record
 * @param status    the gRPC status the client receives
 * @param details   Envoy's response code details (access log {@code %RESPONSE_CODE_DETAILS%})
 */
record LocalReply(int httpCode, Status status, String details) {

    /** {@code source/common/grpc/status.cc}, {@code Utility::httpToGrpcStatus}. */
    static Status.Code grpcStatusOf(int httpCode) {
        return switch (httpCode) {
            case 400 -> Status.Code.INTERNAL;
            case 401 -> Status.Code.UNAUTHENTICATED;
            case 403 -> Status.Code.PERMISSION_DENIED;
            case 404 -> Status.Code.UNIMPLEMENTED;
            case 429, 502, 503, 504 -> Status.Code.UNAVAILABLE;
            default -> Status.Code.UNKNOWN;
        };
    }

    /** A reply from an HTTP code and a body (empty body: no {@code grpc-message}). */
    static LocalReply of(int httpCode, String body, String details) {
        Status s = Status.fromCode(grpcStatusOf(httpCode));
        return new LocalReply(httpCode, body == null || body.isEmpty() ? s : s.withDescription(body), details);
    }

    /** {@code ext_proc.cc}, {@code Filter::onGrpcError} with failure_mode_allow false: 500, empty body. */
    static LocalReply extProcError(Status sideStream) {
        return of(500, "", "ext_proc_error_gRPC_error_" + sideStream.getCode().value() + "{"
                + (sideStream.getDescription() == null ? "" : sideStream.getDescription().replaceAll("\\s", "_"))
                + "}");
    }

    /** {@code ext_proc.cc}, {@code Filter::onMessageTimeout} with failure_mode_allow false: 504, empty body. */
    static LocalReply messageTimeout() {
        return of(504, "", "ext_proc_error_per-message_timeout_exceeded");
    }

    /** {@code router.cc}, {@code Filter::sendNoHealthyUpstreamResponse}: no host chosen. */
    static LocalReply noHealthyUpstream() {
        return of(503, "no healthy upstream", "no_healthy_upstream");
    }
}
