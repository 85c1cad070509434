package io.scrouter.testkit.envoy;

import com.google.protobuf.util.Durations;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.HealthCheck;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the stand-in takes from an Envoy configuration: exactly the settings that decide how a Spark Connect
 * request travels through Envoy to a replica. {@link #of(Bootstrap)} reads them from a real bootstrap (one of
 * the shipped {@code envoy/*.yaml}), so the stand-in runs the configuration users run, not a copy of it.
 *
 * @param routeHeader          ORIGINAL_DST {@code use_http_header}: the header it takes the upstream from
 * @param routeMetadata        ORIGINAL_DST {@code metadata_key}: namespace and key it takes the upstream from
 * @param earlyRemovedHeaders  headers the connection manager's early header mutation removes
 * @param messageTimeout       ext_proc {@code message_timeout} (200 ms when unset, {@code EP/config.h})
 * @param failureModeAllow     ext_proc {@code failure_mode_allow}
 * @param processingMode       ext_proc {@code processing_mode}
 * @param allowModeOverride    ext_proc {@code allow_mode_override}
 * @param allowedOverrideModes ext_proc {@code allowed_override_modes}
 * @param receivingNamespaces  ext_proc {@code metadata_options.receiving_namespaces.untyped}
 * @param streamWindowBytes    connection manager HTTP/2 {@code initial_stream_window_size} (256 MiB when unset):
 *                             the request's buffer limit, which bounds {@code BUFFERED_PARTIAL}
 * @param healthCheck          the ext_proc cluster's gRPC health check
 */
public record EnvoyModel(Optional<String> routeHeader, Optional<MetadataKey> routeMetadata,
                         List<String> earlyRemovedHeaders, Duration messageTimeout, boolean failureModeAllow,
                         ProcessingMode processingMode, boolean allowModeOverride,
                         List<ProcessingMode> allowedOverrideModes, Set<String> receivingNamespaces,
                         int streamWindowBytes, ExtProcHealthCheck healthCheck) {

    /** {@code source/common/http/http_option_limits.h}: {@code DEFAULT_INITIAL_STREAM_WINDOW_SIZE}. */
    public static final int DEFAULT_STREAM_WINDOW = 256 * 1024 * 1024;
    /** {@code EP/config.h}: {@code DefaultMessageTimeoutMs}. */
    public static final Duration DEFAULT_MESSAGE_TIMEOUT = Duration.ofMillis(200);

    /** ORIGINAL_DST {@code metadata_key}: the first path element names the key inside the namespace. */
    public record MetadataKey(String namespace, String key) {
    }

    /**
     * The ext_proc cluster's active gRPC health check.
     *
     * @param service the {@code grpc.health.v1} service name asked for
     */
    public record ExtProcHealthCheck(Duration interval, Duration timeout, int unhealthyThreshold,
                                     int healthyThreshold, String service) {
    }

    public EnvoyModel {
        earlyRemovedHeaders = List.copyOf(earlyRemovedHeaders);
        allowedOverrideModes = List.copyOf(allowedOverrideModes);
        receivingNamespaces = Set.copyOf(receivingNamespaces);
        if (routeHeader.isEmpty() && routeMetadata.isEmpty()) {
            throw new IllegalArgumentException("the ORIGINAL_DST cluster reads neither a header nor metadata");
        }
    }

    /** The same model with other settings, for tests of one behaviour. */
    public EnvoyModel withMessageTimeout(Duration timeout) {
        return new EnvoyModel(routeHeader, routeMetadata, earlyRemovedHeaders, timeout, failureModeAllow,
                processingMode, allowModeOverride, allowedOverrideModes, receivingNamespaces, streamWindowBytes,
                healthCheck);
    }

    public EnvoyModel withStreamWindow(int bytes) {
        return new EnvoyModel(routeHeader, routeMetadata, earlyRemovedHeaders, messageTimeout, failureModeAllow,
                processingMode, allowModeOverride, allowedOverrideModes, receivingNamespaces, bytes, healthCheck);
    }

    public EnvoyModel withEarlyRemovedHeaders(List<String> headers) {
        return new EnvoyModel(routeHeader, routeMetadata, headers, messageTimeout, failureModeAllow,
                processingMode, allowModeOverride, allowedOverrideModes, receivingNamespaces, streamWindowBytes,
                healthCheck);
    }

    public EnvoyModel withAllowedOverrideModes(List<ProcessingMode> modes) {
        return new EnvoyModel(routeHeader, routeMetadata, earlyRemovedHeaders, messageTimeout, failureModeAllow,
                processingMode, allowModeOverride, modes, receivingNamespaces, streamWindowBytes, healthCheck);
    }

    public EnvoyModel withReceivingNamespaces(Set<String> namespaces) {
        return new EnvoyModel(routeHeader, routeMetadata, earlyRemovedHeaders, messageTimeout, failureModeAllow,
                processingMode, allowModeOverride, allowedOverrideModes, namespaces, streamWindowBytes, healthCheck);
    }

    public EnvoyModel withRouteHeader(String header) {
        return new EnvoyModel(Optional.of(header), routeMetadata, earlyRemovedHeaders, messageTimeout,
                failureModeAllow, processingMode, allowModeOverride, allowedOverrideModes, receivingNamespaces,
                streamWindowBytes, healthCheck);
    }

    public EnvoyModel withHealthCheck(ExtProcHealthCheck check) {
        return new EnvoyModel(routeHeader, routeMetadata, earlyRemovedHeaders, messageTimeout, failureModeAllow,
                processingMode, allowModeOverride, allowedOverrideModes, receivingNamespaces, streamWindowBytes,
                check);
    }

    /**
     * Reads the model from a bootstrap with one listener whose connection manager runs ext_proc and routes
     * Spark Connect to an ORIGINAL_DST cluster, as every shipped {@code envoy/*.yaml} does.
     */
    public static EnvoyModel of(Bootstrap bootstrap) {
        HttpConnectionManager hcm = null;
        for (var listener : bootstrap.getStaticResources().getListenersList()) {
            for (var chain : listener.getFilterChainsList()) {
                for (Filter f : chain.getFiltersList()) {
                    if (f.getTypedConfig().getTypeUrl().endsWith("/" + HttpConnectionManager.getDescriptor()
                            .getFullName())) {
                        hcm = EnvoyConfigs.unpack(f.getTypedConfig(), HttpConnectionManager.class);
                    }
                }
            }
        }
        if (hcm == null) {
            throw new IllegalArgumentException("the bootstrap has no http_connection_manager");
        }
        List<String> removed = new ArrayList<>();
        for (var ext : hcm.getEarlyHeaderMutationExtensionsList()) {
            HeaderMutation m = EnvoyConfigs.unpack(ext.getTypedConfig(), HeaderMutation.class);
            m.getMutationsList().forEach(mutation -> {
                if (!mutation.getRemove().isEmpty()) {
                    removed.add(mutation.getRemove());
                }
            });
        }
        ExternalProcessor extProc = null;
        for (HttpFilter f : hcm.getHttpFiltersList()) {
            if (f.getTypedConfig().getTypeUrl().endsWith("/" + ExternalProcessor.getDescriptor().getFullName())) {
                extProc = EnvoyConfigs.unpack(f.getTypedConfig(), ExternalProcessor.class);
            }
        }
        if (extProc == null) {
            throw new IllegalArgumentException("the connection manager runs no ext_proc filter");
        }
        String routeCluster = hcm.getRouteConfig().getVirtualHosts(0).getRoutes(0).getRoute().getCluster();
        Cluster replicas = cluster(bootstrap, routeCluster);
        Cluster extProcCluster = cluster(bootstrap, extProc.getGrpcService().getEnvoyGrpc().getClusterName());
        var dst = replicas.getOriginalDstLbConfig();
        Optional<String> header = dst.getUseHttpHeader()
                ? Optional.of(dst.getHttpHeaderName().isEmpty() ? "x-envoy-original-dst-host" : dst.getHttpHeaderName())
                : Optional.empty();
        Optional<MetadataKey> metadata = dst.hasMetadataKey()
                ? Optional.of(new MetadataKey(dst.getMetadataKey().getKey(),
                        dst.getMetadataKey().getPath(0).getKey()))
                : Optional.empty();
        HealthCheck hc = extProcCluster.getHealthChecks(0);
        ExtProcHealthCheck health = new ExtProcHealthCheck(duration(hc.getInterval()), duration(hc.getTimeout()),
                hc.getUnhealthyThreshold().getValue(), hc.getHealthyThreshold().getValue(),
                hc.getGrpcHealthCheck().getServiceName());
        int window = hcm.getHttp2ProtocolOptions().hasInitialStreamWindowSize()
                ? hcm.getHttp2ProtocolOptions().getInitialStreamWindowSize().getValue() : DEFAULT_STREAM_WINDOW;
        Duration timeout = extProc.hasMessageTimeout() ? duration(extProc.getMessageTimeout()) : DEFAULT_MESSAGE_TIMEOUT;
        return new EnvoyModel(header, metadata, removed, timeout, extProc.getFailureModeAllow(),
                extProc.getProcessingMode(), extProc.getAllowModeOverride(), extProc.getAllowedOverrideModesList(),
                Set.copyOf(extProc.getMetadataOptions().getReceivingNamespaces().getUntypedList()), window, health);
    }

    private static Cluster cluster(Bootstrap bootstrap, String name) {
        return bootstrap.getStaticResources().getClustersList().stream().filter(c -> c.getName().equals(name))
                .findFirst().orElseThrow(() -> new IllegalArgumentException("no cluster named " + name));
    }

    private static Duration duration(com.google.protobuf.Duration d) {
        return Duration.ofMillis(Durations.toMillis(d));
    }
}
