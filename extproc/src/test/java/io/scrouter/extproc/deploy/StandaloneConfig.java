package io.scrouter.extproc.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation;
import java.nio.file.Path;
import java.util.List;

/** One standalone bootstrap from {@code envoy/}, parsed, with the parts the rules look at. */
record StandaloneConfig(String name, JsonNode tree, Bootstrap bootstrap) {

    static final String HCM_TYPE = "type.googleapis.com/" + HttpConnectionManager.getDescriptor().getFullName();
    static final String EXT_PROC_TYPE = "type.googleapis.com/" + ExternalProcessor.getDescriptor().getFullName();
    static final String ROUTER_TYPE = "type.googleapis.com/"
            + io.envoyproxy.envoy.extensions.filters.http.router.v3.Router.getDescriptor().getFullName();

    static StandaloneConfig load(Path file) {
        return parse(RepoFiles.relative(file), RepoFiles.read(file));
    }

    static StandaloneConfig parse(String name, String yaml) {
        try {
            return new StandaloneConfig(name, EnvoyProtos.yamlTree(yaml), EnvoyProtos.bootstrap(yaml));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(name + " is not a valid Envoy 1.34 bootstrap: " + e.getMessage(), e);
        }
    }

    Listener listener() {
        List<Listener> listeners = bootstrap.getStaticResources().getListenersList();
        if (listeners.size() != 1) {
            throw new AssertionError(name + ": expected exactly one listener, found " + listeners.size());
        }
        return listeners.get(0);
    }

    HttpConnectionManager connectionManager() {
        return listener().getFilterChainsList().stream()
                .flatMap(chain -> chain.getFiltersList().stream())
                .filter(f -> f.getTypedConfig().getTypeUrl().equals(HCM_TYPE))
                .map(f -> EnvoyProtos.unpack(f.getTypedConfig(), HttpConnectionManager.class))
                .reduce((a, b) -> {
                    throw new AssertionError(name + ": more than one HTTP connection manager");
                })
                .orElseThrow(() -> new AssertionError(name + ": no HTTP connection manager"));
    }

    /** Every mutation of the connection manager's early header mutations, which run before any filter. */
    List<io.envoyproxy.envoy.config.common.mutation_rules.v3.HeaderMutation> earlyMutations() {
        return connectionManager().getEarlyHeaderMutationExtensionsList().stream()
                .map(ext -> EnvoyProtos.unpack(ext.getTypedConfig(), HeaderMutation.class))
                .flatMap(m -> m.getMutationsList().stream())
                .toList();
    }

    List<HttpFilter> httpFilters() {
        return connectionManager().getHttpFiltersList();
    }

    int filterIndex(String typeUrl) {
        List<HttpFilter> filters = httpFilters();
        for (int i = 0; i < filters.size(); i++) {
            if (filters.get(i).getTypedConfig().getTypeUrl().equals(typeUrl)) {
                return i;
            }
        }
        throw new AssertionError(name + ": no HTTP filter of type " + typeUrl);
    }

    ExternalProcessor extProc() {
        return EnvoyProtos.unpack(httpFilters().get(filterIndex(EXT_PROC_TYPE)).getTypedConfig(),
                ExternalProcessor.class);
    }

    List<Route> routes() {
        return connectionManager().getRouteConfig().getVirtualHostsList().stream()
                .flatMap(vhost -> vhost.getRoutesList().stream())
                .toList();
    }

    Cluster cluster(String clusterName) {
        return bootstrap.getStaticResources().getClustersList().stream()
                .filter(c -> c.getName().equals(clusterName))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + ": no cluster named " + clusterName));
    }

    /** The cluster the Spark Connect route sends to: the replicas. */
    Cluster replicaCluster() {
        List<String> targets = routes().stream().map(r -> r.getRoute().getCluster()).distinct().toList();
        if (targets.size() != 1) {
            throw new AssertionError(name + ": expected every route to go to one cluster, found " + targets);
        }
        return cluster(targets.get(0));
    }

    Cluster extProcCluster() {
        return cluster(extProc().getGrpcService().getEnvoyGrpc().getClusterName());
    }
}
