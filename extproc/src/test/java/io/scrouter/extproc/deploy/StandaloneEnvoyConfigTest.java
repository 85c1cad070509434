package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.Durations;
import io.envoyproxy.envoy.config.accesslog.v3.AccessLog;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.HealthCheck;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.extensions.access_loggers.stream.v3.StdoutAccessLog;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every standalone bootstrap in {@code envoy/} parses into Envoy 1.34 protos and follows the data-path rules. */
class StandaloneEnvoyConfigTest {

    /** How each shipped bootstrap carries the upstream; a new file must be added here to be checked. */
    private static final Map<String, UpstreamCarrier> CARRIERS = Map.of(
            "envoy.yaml", UpstreamCarrier.HEADER,
            "envoy-tls.yaml", UpstreamCarrier.HEADER,
            "envoy-metadata.yaml", UpstreamCarrier.METADATA,
            "envoy-groups.yaml", UpstreamCarrier.METADATA);

    static Stream<Path> bootstraps() {
        return RepoFiles.envoyBootstraps().stream();
    }

    private static UpstreamCarrier carrier(StandaloneConfig config) {
        return CARRIERS.get(Path.of(config.name()).getFileName().toString());
    }

    @Test
    void everyShippedBootstrapHasAnExpectedUpstreamCarrier() {
        assertThat(RepoFiles.envoyBootstraps())
                .extracting(p -> p.getFileName().toString())
                .containsExactlyInAnyOrderElementsOf(CARRIERS.keySet());
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void clientRouteHeaderIsStrippedBeforeAnyFilterOrRouting(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        HttpConnectionManager hcm = config.connectionManager();

        // Early header mutation runs before route selection and before the whole HTTP filter chain.
        List<HeaderMutation> early = hcm.getEarlyHeaderMutationExtensionsList().stream()
                .map(ext -> EnvoyProtos.unpack(ext.getTypedConfig(), HeaderMutation.class))
                .toList();
        assertThat(early).as("%s: early_header_mutation_extensions", config.name()).isNotEmpty();
        DataPathRules.removesUpstreamHeader(config.name(),
                early.stream().flatMap(m -> m.getMutationsList().stream()).toList());
        assertThat(config.filterIndex(StandaloneConfig.EXT_PROC_TYPE))
                .as("%s: ext_proc must run before the router", config.name())
                .isLessThan(config.filterIndex(StandaloneConfig.ROUTER_TYPE));
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void clientGroupHeaderIsStrippedBeforeAnyFilter(Path file) {
        // Every bootstrap, not only the one that sets the group: the router must never read a group a client wrote.
        StandaloneConfig config = StandaloneConfig.load(file);
        DataPathRules.removesGroupHeader(config.name() + " early_header_mutation_extensions", config.earlyMutations());
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void extProcFailsClosedAndSeesRequestHeadersOnly(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        DataPathRules.extProcFilter(config.name(), config.extProc(), carrier(config));
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void bodyBufferIsBoundedToWhatTheServiceAccepts(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        DataPathRules.streamWindowFitsTheService(config.name(), config.connectionManager(),
                ShippedService.defaults().server().maxBufferedBodyBytes());
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void bodyModeBuffersABoundedAmountPerRequest(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        // BUFFERED_PARTIAL holds a header-less request until its body ends or this many bytes arrived: large
        // enough for any first message's session_id (43 bytes), small enough to bound memory per request.
        assertThat(config.listener().hasPerConnectionBufferLimitBytes())
                .as("%s: per_connection_buffer_limit_bytes set explicitly", config.name()).isTrue();
        assertThat(config.listener().getPerConnectionBufferLimitBytes().getValue())
                .as("%s: per_connection_buffer_limit_bytes", config.name())
                .isBetween(64 * 1024, 16 * 1024 * 1024);
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void replicasAreReachedThroughOriginalDstDrivenByTheService(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        DataPathRules.replicaCluster(config.name(), config.replicaCluster(), carrier(config));
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void sparkConnectRoutesHaveNoDeadline(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        List<Route> routes = config.routes();
        assertThat(routes).as("%s: routes", config.name()).isNotEmpty();
        String replicas = config.replicaCluster().getName();
        for (Route route : routes) {
            DataPathRules.replicaRoute(config.name() + " route " + route.getMatch(), route.getRoute(), replicas);
            assertThat(route.getRequestHeadersToRemoveList())
                    .as("%s: header removal belongs in the connection manager, not the route", config.name())
                    .doesNotContain(RouteHeaders.UPSTREAM);
        }
        assertThat(config.connectionManager().getCodecType())
                .as("%s: Spark Connect is gRPC over HTTP/2", config.name())
                .isEqualTo(HttpConnectionManager.CodecType.HTTP2);
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void extProcClusterIsHttp2HealthCheckedAndScalable(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        Cluster cluster = config.extProcCluster();
        String where = config.name() + " cluster " + cluster.getName();

        DataPathRules.http2Upstream(where, cluster);
        DataPathRules.circuitBreakersRaised(where, cluster);
        assertThat(cluster.getType())
                .as("%s: STRICT_DNS keeps every address of a name, so several instances can serve", where)
                .isEqualTo(Cluster.DiscoveryType.STRICT_DNS);
        assertThat(cluster.getHealthChecksList()).as("%s: health checks", where).isNotEmpty();
        HealthCheck check = cluster.getHealthChecks(0);
        assertThat(check.hasGrpcHealthCheck()).as("%s: gRPC health check", where).isTrue();
        assertThat(check.getGrpcHealthCheck().getServiceName()).as("%s: health-checked service", where)
                .isEqualTo(RouteHeaders.HEALTH_SERVICE);
        assertThat(Durations.toMillis(check.getTimeout())).as("%s: health-check timeout", where)
                .isBetween(1L, 1000L);

        List<SocketAddress> endpoints = cluster.getLoadAssignment().getEndpointsList().stream()
                .flatMap(e -> e.getLbEndpointsList().stream())
                .map(LbEndpoint::getEndpoint)
                .map(e -> e.getAddress().getSocketAddress())
                .toList();
        assertThat(endpoints).as("%s: endpoints", where).isNotEmpty()
                .allSatisfy(a -> assertThat(a.getPortValue()).isEqualTo(RouteHeaders.DEFAULT_EXTPROC_PORT));
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void adminIsBoundToLoopbackOnly(Path file) throws UnknownHostException {
        StandaloneConfig config = StandaloneConfig.load(file);
        String address = config.bootstrap().getAdmin().getAddress().getSocketAddress().getAddress();
        assertThat(address).as("%s: admin address", config.name()).isNotEmpty();
        assertThat(InetAddress.getByName(address).isLoopbackAddress())
                .as("%s: admin on %s can drain and quit Envoy", config.name(), address).isTrue();
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void accessLogShowsSessionChosenUpstreamAndStatus(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        List<AccessLog> logs = config.connectionManager().getAccessLogList();
        assertThat(logs).as("%s: access_log", config.name()).isNotEmpty();
        String format = logs.stream()
                .map(log -> EnvoyProtos.unpack(log.getTypedConfig(), StdoutAccessLog.class).getLogFormat())
                .map(Object::toString)
                .reduce("", String::concat)
                .toLowerCase(java.util.Locale.ROOT);
        assertThat(format).as("%s: access log format", config.name())
                .contains("%req(" + RouteHeaders.SESSION_ID + ")%")
                .contains("%upstream_host%")
                .contains("%response_code%")
                .contains("%grpc_status");
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void everyHeaderNameMentionedIsOneTheServiceUses(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        DataPathRules.mentionsOnlyKnownHeaders(config.name(), config.tree());
    }

    @ParameterizedTest
    @MethodSource("bootstraps")
    void tlsListenersOfferHttp2AndModernTls(Path file) {
        StandaloneConfig config = StandaloneConfig.load(file);
        for (FilterChain chain : config.listener().getFilterChainsList()) {
            if (!chain.hasTransportSocket()) {
                continue;
            }
            DownstreamTlsContext tls = EnvoyProtos.unpack(chain.getTransportSocket().getTypedConfig(),
                    DownstreamTlsContext.class);
            assertThat(tls.getCommonTlsContext().getAlpnProtocolsList()).as("%s: ALPN", config.name())
                    .contains("h2");
            assertThat(tls.getCommonTlsContext().getTlsCertificatesList()).as("%s: certificates", config.name())
                    .isNotEmpty();
        }
    }

    @Test
    void theTlsVariantTerminatesTls() {
        StandaloneConfig config = StandaloneConfig.load(RepoFiles.root().resolve("envoy/envoy-tls.yaml"));
        assertThat(config.listener().getFilterChainsList()).allMatch(FilterChain::hasTransportSocket);
    }
}
