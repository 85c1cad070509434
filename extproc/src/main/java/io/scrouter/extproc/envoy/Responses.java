package io.scrouter.extproc.envoy;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.GrpcStatus;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import io.grpc.Status;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/** Builds the ext_proc answers the service gives. */
public final class Responses {

    /**
     * The processing mode the service asks for, through {@code mode_override}, when a Spark Connect request
     * has no session header: the request body in {@code BUFFERED_PARTIAL} mode and nothing else. Every field
     * is explicit because Envoy versions differ on what an unset ({@code DEFAULT}) field means in an override,
     * and because Envoy's {@code allowed_override_modes} compares all fields but the request header mode:
     * the shipped Envoy configs list exactly this mode there (the deploy tests check it).
     *
     * <p>{@code BUFFERED_PARTIAL} is the one mode that fits: Envoy holds the headers until it has the whole
     * body or a buffer's worth of it, sends that once, and applies the header mutation of our
     * {@code BodyResponse} before the router picks the upstream; the rest of a large client-streaming upload
     * (AddArtifacts) then flows through unbuffered. See this package's documentation for the evidence.
     */
    public static final ProcessingMode BODY_MODE = ProcessingMode.newBuilder()
            .setRequestHeaderMode(ProcessingMode.HeaderSendMode.SEND)
            .setResponseHeaderMode(ProcessingMode.HeaderSendMode.SKIP)
            .setRequestBodyMode(ProcessingMode.BodySendMode.BUFFERED_PARTIAL)
            .setResponseBodyMode(ProcessingMode.BodySendMode.NONE)
            .setRequestTrailerMode(ProcessingMode.HeaderSendMode.SKIP)
            .setResponseTrailerMode(ProcessingMode.HeaderSendMode.SKIP)
            .build();

    private Responses() {
    }

    /**
     * Route to {@code address}: overwrite (never append) our route header, written only in {@code raw_value}
     * (Envoy 1.34 reads nothing else, {@code MutationUtils::applyHeaderMutations}; 1.27 to 1.31 answered 500 when
     * both value fields were set), and the same address as dynamic metadata for the
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

    /**
     * Answers routing to each address, built once: the pool holds a handful of addresses and every routed
     * request answers with one of them, so the request path only looks the message up (protos are immutable).
     */
    private static final ConcurrentHashMap<String, ProcessingResponse> ROUTE_ANSWERS =
            new ConcurrentHashMap<>();

    public static ProcessingResponse routeOnHeaders(String address) {
        ProcessingResponse cached = ROUTE_ANSWERS.get(address);
        if (cached != null) {
            return cached;
        }
        ProcessingResponse built = buildRouteOnHeaders(address);
        // Bounded: addresses only ever come from the pool, and a long-lived router sees few distinct ones.
        if (ROUTE_ANSWERS.size() < 4096) {
            ROUTE_ANSWERS.putIfAbsent(address, built);
        }
        return built;
    }

    private static ProcessingResponse buildRouteOnHeaders(String address) {
        return ProcessingResponse.newBuilder()
                .setRequestHeaders(HeadersResponse.newBuilder()
                        .setResponse(CommonResponse.newBuilder().setHeaderMutation(routeMutation(address))))
                .setDynamicMetadata(routeMetadata(address))
                .build();
    }

    /**
     * Answer request headers that carry no session id with "no change yet, send me the body": the route is
     * set later, on the body answer ({@link #routeOnBody}).
     */
    public static ProcessingResponse askForBody() {
        return ProcessingResponse.newBuilder()
                .setRequestHeaders(HeadersResponse.getDefaultInstance())
                .setModeOverride(BODY_MODE)
                .build();
    }

    /**
     * Route to {@code address} from the answer to a request body message: Envoy applies a body answer's
     * header mutation to the request headers it is still holding ({@code BUFFERED_PARTIAL}).
     */
    public static ProcessingResponse routeOnBody(String address) {
        return ProcessingResponse.newBuilder()
                .setRequestBody(BodyResponse.newBuilder()
                        .setResponse(CommonResponse.newBuilder().setHeaderMutation(routeMutation(address))))
                .setDynamicMetadata(routeMetadata(address))
                .build();
    }

    /** Leave one request body message unchanged. */
    public static ProcessingResponse bodyUnchanged() {
        return ProcessingResponse.newBuilder().setRequestBody(BodyResponse.getDefaultInstance()).build();
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
    public static ProcessingResponse passThrough(ProcessingRequest request) {
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
