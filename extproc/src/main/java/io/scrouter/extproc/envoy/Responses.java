package io.scrouter.extproc.envoy;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.GrpcStatus;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import io.grpc.Status;

import java.nio.charset.StandardCharsets;

/** Builds the ext_proc answers the service gives. */
public final class Responses {

    private Responses() {
    }

    /**
     * Route to {@code address}: overwrite (never append) our route header, written only in {@code raw_value}
     * (Envoy answers 500 when both value fields are set), and the same address as dynamic metadata for the
     * {@code metadata_key} variant.
     */
    public static HeaderMutation routeMutation(String address) {
        return HeaderMutation.newBuilder()
                .addSetHeaders(HeaderValueOption.newBuilder()
                        .setHeader(HeaderValue.newBuilder()
                                .setKey(RouteHeaders.UPSTREAM)
                                .setRawValue(ByteString.copyFrom(address, StandardCharsets.US_ASCII)))
                        .setAppendAction(HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD))
                .build();
    }

    public static Struct routeMetadata(String address) {
        Struct inner = Struct.newBuilder()
                .putFields(RouteHeaders.METADATA_UPSTREAM_KEY, Value.newBuilder().setStringValue(address).build())
                .build();
        return Struct.newBuilder()
                .putFields(RouteHeaders.METADATA_NAMESPACE, Value.newBuilder().setStructValue(inner).build())
                .build();
    }

    public static ProcessingResponse routeOnHeaders(String address) {
        return ProcessingResponse.newBuilder()
                .setRequestHeaders(HeadersResponse.newBuilder()
                        .setResponse(CommonResponse.newBuilder().setHeaderMutation(routeMutation(address))))
                .setDynamicMetadata(routeMetadata(address))
                .build();
    }

    /**
     * Reject with a gRPC status. Envoy answers trailers-only with {@code grpc-status} and turns the body
     * into {@code grpc-message}; {@code details} (no spaces allowed) shows in Envoy's access log.
     */
    public static ProcessingResponse reject(Status.Code code, String reason, String message) {
        return ProcessingResponse.newBuilder()
                .setImmediateResponse(ImmediateResponse.newBuilder()
                        .setStatus(HttpStatus.newBuilder().setCode(StatusCode.OK))
                        .setGrpcStatus(GrpcStatus.newBuilder().setStatus(code.value()))
                        .setBody(ByteString.copyFrom(message, StandardCharsets.UTF_8))
                        .setDetails("scrouter_" + reason))
                .build();
    }

    /** Let a phase we did not ask for pass unchanged, so Envoy is never left waiting. */
    public static ProcessingResponse passThrough(io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest request) {
        ProcessingResponse.Builder b = ProcessingResponse.newBuilder();
        switch (request.getRequestCase()) {
            case REQUEST_HEADERS -> b.setRequestHeaders(HeadersResponse.getDefaultInstance());
            case RESPONSE_HEADERS -> b.setResponseHeaders(HeadersResponse.getDefaultInstance());
            case REQUEST_BODY -> b.setRequestBody(BodyResponse.getDefaultInstance());
            case RESPONSE_BODY -> b.setResponseBody(BodyResponse.getDefaultInstance());
            case REQUEST_TRAILERS -> b.setRequestTrailers(TrailersResponse.getDefaultInstance());
            case RESPONSE_TRAILERS -> b.setResponseTrailers(TrailersResponse.getDefaultInstance());
            default -> b.setRequestHeaders(HeadersResponse.getDefaultInstance());
        }
        return b.build();
    }
}
