package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.util.Durations;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.common.mutation_rules.v3.HeaderMutation;
import io.envoyproxy.envoy.config.core.v3.RoutingPriority;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.BodySendMode;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode.HeaderSendMode;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.scrouter.extproc.envoy.Responses;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The data-path rules every Envoy config in the repository must follow, standalone or as Istio patches:
 * what Envoy enforces at load time, and what the routing's safety depends on.
 */
final class DataPathRules {

    static final String HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

    /** Envoy's default for each circuit-breaker limit; one ORIGINAL_DST cluster carries all sessions. */
    private static final int ENVOY_DEFAULT_LIMIT = 1024;

    private static final Pattern OUR_HEADER_NAMES = Pattern.compile("(?i)x-(?:scrouter|spark)[a-z0-9-]*");

    private DataPathRules() {
    }

    static void extProcFilter(String where, ExternalProcessor filter, UpstreamCarrier carrier) {
        assertThat(filter.getFailureModeAllow())
                .as("%s: failure_mode_allow must be false, or an outage lets requests through unrouted", where)
                .isFalse();
        assertThat(filter.getObservabilityMode())
                .as("%s: observability_mode ignores the service's answers", where).isFalse();
        assertThat(filter.getDisableImmediateResponse())
                .as("%s: the service rejects bad requests with ImmediateResponse", where).isFalse();
        assertThat(filter.hasGrpcService() && filter.getGrpcService().hasEnvoyGrpc())
                .as("%s: ext_proc talks gRPC to an Envoy cluster", where).isTrue();

        ProcessingMode mode = filter.getProcessingMode();
        assertThat(mode.getRequestHeaderMode()).as("%s: request_header_mode", where).isEqualTo(HeaderSendMode.SEND);
        assertThat(mode.getResponseHeaderMode()).as("%s: response_header_mode", where).isEqualTo(HeaderSendMode.SKIP);
        assertThat(mode.getRequestBodyMode()).as("%s: request_body_mode", where).isEqualTo(BodySendMode.NONE);
        assertThat(mode.getResponseBodyMode()).as("%s: response_body_mode", where).isEqualTo(BodySendMode.NONE);
        assertThat(mode.getRequestTrailerMode()).as("%s: request_trailer_mode", where).isEqualTo(HeaderSendMode.SKIP);
        assertThat(mode.getResponseTrailerMode()).as("%s: response_trailer_mode", where)
                .isEqualTo(HeaderSendMode.SKIP);
        assertThat(filter.getAllowModeOverride())
                .as("%s: allow_mode_override lets the service ask for the body when the header is missing", where)
                .isTrue();
        bodyModeOverride(where, filter);

        assertThat(filter.hasMessageTimeout()).as("%s: message_timeout set explicitly", where).isTrue();
        long timeoutMs = Durations.toMillis(filter.getMessageTimeout());
        assertThat(timeoutMs)
                .as("%s: message_timeout must leave room for the service's Redis deadline yet fail fast", where)
                .isBetween(100L, 1000L);

        List<String> receiving = filter.getMetadataOptions().getReceivingNamespaces().getUntypedList();
        if (carrier == UpstreamCarrier.METADATA) {
            assertThat(receiving)
                    .as("%s: Envoy drops processor metadata outside receiving_namespaces", where)
                    .contains(RouteHeaders.METADATA_NAMESPACE);
        }
    }

    /**
     * Body mode (requests without the session header): the one override the service sends must be the one
     * Envoy accepts. Envoy 1.34 compares every field but request_header_mode; 1.32 and 1.33 compare the whole
     * message ({@code ext_proc.cc}, {@code Filter::onReceiveMessage}), so the entry must equal it exactly.
     */
    static void bodyModeOverride(String where, ExternalProcessor filter) {
        assertThat(filter.getAllowedOverrideModesList())
                .as("%s: allowed_override_modes must list exactly the service's body mode, every field", where)
                .containsExactly(Responses.BODY_MODE);
        assertThat(Responses.BODY_MODE.getRequestBodyMode())
                .as("%s: only BUFFERED_PARTIAL lets a body answer set the route and still streams uploads", where)
                .isEqualTo(BodySendMode.BUFFERED_PARTIAL);
        assertThat(filter.getSendBodyWithoutWaitingForHeaderResponse())
                .as("%s: the body must wait for the header answer that asks for it", where).isFalse();
        assertThat(filter.hasMaxMessageTimeout())
                .as("%s: the service never asks for more time; max_message_timeout stays unset", where).isFalse();
    }

    static void replicaCluster(String where, Cluster cluster, UpstreamCarrier carrier) {
        assertThat(cluster.getType()).as("%s: replica cluster type", where).isEqualTo(Cluster.DiscoveryType.ORIGINAL_DST);
        assertThat(cluster.getLbPolicy())
                .as("%s: Envoy refuses ORIGINAL_DST without CLUSTER_PROVIDED", where)
                .isEqualTo(Cluster.LbPolicy.CLUSTER_PROVIDED);
        assertThat(cluster.hasLoadAssignment())
                .as("%s: Envoy refuses ORIGINAL_DST with a load_assignment", where).isFalse();

        Cluster.OriginalDstLbConfig dst = cluster.getOriginalDstLbConfig();
        assertThat(dst.hasUpstreamPortOverride())
                .as("%s: the service's ip:port must be used as is", where).isFalse();
        if (carrier == UpstreamCarrier.HEADER) {
            assertThat(dst.getUseHttpHeader()).as("%s: use_http_header", where).isTrue();
            assertThat(dst.getHttpHeaderName())
                    .as("%s: http_header_name must be the header the service writes", where)
                    .isEqualTo(RouteHeaders.UPSTREAM);
            assertThat(dst.hasMetadataKey()).as("%s: header variant has no metadata_key", where).isFalse();
        } else {
            assertThat(dst.getUseHttpHeader())
                    .as("%s: metadata variant must not also trust a header", where).isFalse();
            assertThat(dst.getHttpHeaderName())
                    .as("%s: Envoy refuses http_header_name without use_http_header", where).isEmpty();
            assertThat(dst.getMetadataKey().getKey()).as("%s: metadata_key.key", where)
                    .isEqualTo(RouteHeaders.METADATA_NAMESPACE);
            assertThat(dst.getMetadataKey().getPathList())
                    .as("%s: metadata_key.path", where)
                    .extracting(segment -> segment.getKey())
                    .containsExactly(RouteHeaders.METADATA_UPSTREAM_KEY);
        }

        assertThat(cluster.hasTransportSocket()).as("%s: Spark Connect replicas speak plaintext", where).isFalse();
        assertThat(cluster.hasConnectTimeout()).as("%s: connect_timeout set", where).isTrue();
        assertThat(Durations.toMillis(cluster.getConnectTimeout()))
                .as("%s: a dead replica must fail fast", where).isBetween(100L, 5000L);
        http2Upstream(where, cluster);
        circuitBreakersRaised(where, cluster);
    }

    static void http2Upstream(String where, Cluster cluster) {
        Any options = cluster.getTypedExtensionProtocolOptionsMap().get(HTTP_PROTOCOL_OPTIONS);
        assertThat(options).as("%s: cluster %s needs %s", where, cluster.getName(), HTTP_PROTOCOL_OPTIONS)
                .isNotNull();
        HttpProtocolOptions http = EnvoyProtos.unpack(options, HttpProtocolOptions.class);
        assertThat(http.hasExplicitHttpConfig() && http.getExplicitHttpConfig().hasHttp2ProtocolOptions())
                .as("%s: cluster %s must speak HTTP/2 (gRPC)", where, cluster.getName())
                .isTrue();
    }

    static void circuitBreakersRaised(String where, Cluster cluster) {
        CircuitBreakers.Thresholds defaults = cluster.getCircuitBreakers().getThresholdsList().stream()
                .filter(t -> t.getPriority() == RoutingPriority.DEFAULT)
                .findFirst()
                .orElseThrow(() -> new AssertionError(where + ": no DEFAULT circuit-breaker thresholds on "
                        + cluster.getName()));
        assertThat(defaults.getMaxConnections().getValue()).as("%s: max_connections", where)
                .isGreaterThan(ENVOY_DEFAULT_LIMIT);
        assertThat(defaults.getMaxPendingRequests().getValue()).as("%s: max_pending_requests", where)
                .isGreaterThan(ENVOY_DEFAULT_LIMIT);
        assertThat(defaults.getMaxRequests().getValue()).as("%s: max_requests", where)
                .isGreaterThan(ENVOY_DEFAULT_LIMIT);
    }

    static void replicaRoute(String where, RouteAction route, String replicaCluster) {
        assertThat(route.getCluster()).as("%s: route target", where).isEqualTo(replicaCluster);
        assertThat(route.hasTimeout())
                .as("%s: route timeout must be set to 0s (unset means Envoy's 15s)", where).isTrue();
        assertThat(route.getTimeout()).as("%s: route timeout", where).isEqualTo(Duration.getDefaultInstance());
    }

    /**
     * BUFFERED_PARTIAL sends a header-less request's body to the service in one message once more than the
     * downstream stream's buffer limit has arrived; for HTTP/2 that limit is {@code initial_stream_window_size}
     * ({@code http2/codec_impl.cc}), 256 MiB unless set. It must be set, and at most what the service accepts.
     */
    static void streamWindowFitsTheService(String where, HttpConnectionManager hcm, int serviceMaxBufferedBody) {
        assertThat(hcm.getHttp2ProtocolOptions().hasInitialStreamWindowSize())
                .as("%s: http2_protocol_options.initial_stream_window_size must be set (Envoy's default is 256 MiB)",
                        where).isTrue();
        assertThat(hcm.getHttp2ProtocolOptions().getInitialStreamWindowSize().getValue())
                .as("%s: initial_stream_window_size must not exceed the service's server.maxBufferedBodyBytes", where)
                .isPositive().isLessThanOrEqualTo(serviceMaxBufferedBody);
    }

    /** The mutation list must drop the client's copy of the route header. */
    static void removesUpstreamHeader(String where, List<HeaderMutation> mutations) {
        assertThat(mutations)
                .as("%s: must remove the client's %s", where, RouteHeaders.UPSTREAM)
                .extracting(HeaderMutation::getRemove)
                .contains(RouteHeaders.UPSTREAM);
    }

    /**
     * The mutation list must drop the client's copy of the group header too. Where Envoy sets the group from a
     * token, jwt_authn removes a client's copy only when a verifier runs for the request
     * ({@code jwt_authn/verifier.cc}, {@code ProviderVerifierImpl::verify} calling
     * {@code ExtractorImpl::sanitizeHeaders}) and then appends its own value ({@code authenticator.cc},
     * {@code addJWTClaimToHeader}, {@code addCopy}); where nothing sets it, only this removal keeps a client from
     * choosing its own group.
     */
    static void removesGroupHeader(String where, List<HeaderMutation> mutations) {
        assertThat(mutations)
                .as("%s: must remove the client's %s", where, RouteHeaders.GROUP)
                .extracting(HeaderMutation::getRemove)
                .contains(RouteHeaders.GROUP);
    }

    /**
     * Every header name of ours mentioned anywhere in a config (access log formats included) must be
     * one the service actually uses, so a typo cannot hide in a field the other rules do not look at.
     */
    static void mentionsOnlyKnownHeaders(String where, JsonNode config) {
        Set<String> known = Set.of(RouteHeaders.UPSTREAM, RouteHeaders.SESSION_ID, RouteHeaders.GROUP);
        List<String> mentioned = new ArrayList<>();
        collectHeaderNames(config, mentioned);
        assertThat(mentioned).as("%s: header names of ours", where).isNotEmpty().allSatisfy(
                name -> assertThat(known).as("%s: unknown header %s", where, name).contains(name));
    }

    private static void collectHeaderNames(JsonNode node, List<String> out) {
        if (node.isTextual()) {
            Matcher m = OUR_HEADER_NAMES.matcher(node.asText());
            while (m.find()) {
                out.add(m.group().toLowerCase(Locale.ROOT));
            }
        }
        node.forEach(child -> collectHeaderNames(child, out));
    }
}
