package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.header_mutation.v3.HeaderMutation;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Istio EnvoyFilters: every patch value parses into the Envoy proto its {@code applyTo} implies, the
 * patches follow the same data-path rules as the standalone configs, and they agree with the Gateway,
 * VirtualService and Service they depend on.
 */
class IstioEnvoyFilterTest {

    private static final String ROUTER = "envoy.filters.http.router";

    /** Field names of Istio's EnvoyFilter API (networking/v1alpha3), per object; a typo is not silently ignored. */
    private static final Map<String, Set<String>> ISTIO_FIELDS = Map.ofEntries(
            Map.entry("spec", Set.of("workloadSelector", "targetRefs", "configPatches", "priority")),
            Map.entry("configPatch", Set.of("applyTo", "match", "patch")),
            Map.entry("match", Set.of("context", "proxy", "listener", "routeConfiguration", "cluster")),
            Map.entry("proxy", Set.of("proxyVersion", "metadata")),
            Map.entry("listener", Set.of("portNumber", "portName", "filterChain", "listenerFilter", "name")),
            Map.entry("filterChain", Set.of("name", "sni", "transportProtocol", "applicationProtocols", "filter",
                    "destinationPort")),
            Map.entry("filter", Set.of("name", "subFilter")),
            Map.entry("subFilter", Set.of("name")),
            Map.entry("routeConfiguration", Set.of("portNumber", "portName", "gateway", "vhost", "name")),
            Map.entry("vhost", Set.of("name", "route", "domainName")),
            Map.entry("route", Set.of("name", "action")),
            Map.entry("cluster", Set.of("portNumber", "service", "subset", "name")),
            Map.entry("patch", Set.of("operation", "value", "filterClass")));

    private static final Set<String> APPLY_TO = Set.of("LISTENER", "FILTER_CHAIN", "NETWORK_FILTER", "HTTP_FILTER",
            "ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE", "CLUSTER", "EXTENSION_CONFIG", "BOOTSTRAP",
            "LISTENER_FILTER");
    private static final Set<String> CONTEXTS = Set.of("ANY", "SIDECAR_INBOUND", "SIDECAR_OUTBOUND", "GATEWAY");
    private static final Set<String> OPERATIONS = Set.of("MERGE", "ADD", "REMOVE", "INSERT_BEFORE", "INSERT_AFTER",
            "INSERT_FIRST", "REPLACE");

    static final String JWT_AUTHN = "envoy.filters.http.jwt_authn";
    static final String RBAC = "envoy.filters.http.rbac";

    /**
     * The HTTP filter chain Istio 1.24 generates for a gateway with a RequestAuthentication and an
     * AuthorizationPolicy, enough to place patches relative to each other: metadata exchange, jwt_authn, RBAC,
     * gRPC stats, fault, CORS, telemetry, router (pilot/pkg/networking/core/listener_builder.go,
     * {@code buildHTTPConnectionManager}; the same order up to release-1.28). jwt_authn and RBAC are there only
     * when such policies select the gateway.
     */
    private static final List<String> ISTIO_HTTP_FILTERS = List.of("istio.metadata_exchange", JWT_AUTHN, RBAC,
            "envoy.filters.http.grpc_stats", "envoy.filters.http.fault", "envoy.filters.http.cors", "istio.stats",
            ROUTER);

    static Stream<Manifest> envoyFilters() {
        return Manifest.ofKind("EnvoyFilter").stream();
    }

    /** The parts of one EnvoyFilter that make up the data path. */
    private record DataPath(EnvoyFilterPatch strip, EnvoyFilterPatch extProc, EnvoyFilterPatch cluster,
                            EnvoyFilterPatch route) {

        static DataPath of(Manifest envoyFilter) {
            List<EnvoyFilterPatch> patches = EnvoyFilterPatch.of(envoyFilter);
            return new DataPath(
                    single(envoyFilter, patches, "HTTP_FILTER", HeaderMutation.getDescriptor().getFullName()),
                    single(envoyFilter, patches, "HTTP_FILTER", ExternalProcessor.getDescriptor().getFullName()),
                    single(envoyFilter, patches, "CLUSTER", null),
                    single(envoyFilter, patches, "HTTP_ROUTE", null));
        }

        private static EnvoyFilterPatch single(Manifest envoyFilter, List<EnvoyFilterPatch> patches, String applyTo,
                                               String filterType) {
            List<EnvoyFilterPatch> found = patches.stream()
                    .filter(p -> p.applyTo().equals(applyTo))
                    .filter(p -> filterType == null || p.valueAs(HttpFilter.class).getTypedConfig().getTypeUrl()
                            .endsWith("/" + filterType))
                    .toList();
            assertThat(found).as("%s: one %s patch %s", envoyFilter.where(), applyTo,
                    filterType == null ? "" : filterType).hasSize(1);
            return found.get(0);
        }

        ExternalProcessor extProcFilter() {
            return EnvoyProtos.unpack(extProc.valueAs(HttpFilter.class).getTypedConfig(), ExternalProcessor.class);
        }

        Cluster replicaCluster() {
            return cluster.valueAs(Cluster.class);
        }
    }

    @Test
    void thereIsAGatewayVariant() {
        assertThat(EnvoyFilterPatch.all()).extracting(EnvoyFilterPatch::context).contains("GATEWAY");
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void everyPatchParsesIntoTheEnvoyProtoItsApplyToImplies(Manifest envoyFilter) {
        List<EnvoyFilterPatch> patches = EnvoyFilterPatch.of(envoyFilter);
        assertThat(patches).as(envoyFilter.where()).isNotEmpty().allSatisfy(p -> {
            assertThat(APPLY_TO).as("%s applyTo", p.where()).contains(p.applyTo());
            assertThat(CONTEXTS).as("%s context", p.where()).contains(p.context());
            assertThat(OPERATIONS).as("%s operation", p.where()).contains(p.operation());
            assertThat(p.value()).as("%s value", p.where()).isNotNull();
        });
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void usesOnlyFieldsOfIstiosEnvoyFilterApi(Manifest envoyFilter) {
        assertThat(envoyFilter.doc().path("apiVersion").asText()).isEqualTo("networking.istio.io/v1alpha3");
        checkIstioFields(envoyFilter.where(), "spec", envoyFilter.spec());
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void headerRemovalRunsBeforeExtProcWhichRunsBeforeTheRouter(Manifest envoyFilter) {
        DataPath path = DataPath.of(envoyFilter);
        HeaderMutation strip = EnvoyProtos.unpack(path.strip().valueAs(HttpFilter.class).getTypedConfig(),
                HeaderMutation.class);
        DataPathRules.removesUpstreamHeader(path.strip().where(), strip.getMutations().getRequestMutationsList());

        assertThat(path.strip().context()).as("same proxies").isEqualTo(path.extProc().context());
        assertThat(path.strip().listenerPort()).as("%s: both filters on the same listener", envoyFilter.where())
                .isPositive().isEqualTo(path.extProc().listenerPort());

        List<String> chain = applyHttpFilterPatches(envoyFilter);
        String stripName = path.strip().valueAs(HttpFilter.class).getName();
        String extProcName = path.extProc().valueAs(HttpFilter.class).getName();
        assertThat(chain.indexOf(stripName)).as("%s: resulting chain %s", envoyFilter.where(), chain)
                .isNotNegative()
                .isLessThan(chain.indexOf(extProcName));
        assertThat(chain.indexOf(extProcName)).as("%s: resulting chain %s", envoyFilter.where(), chain)
                .isLessThan(chain.indexOf(ROUTER));
        assertThat(chain.indexOf(stripName)).as("%s: removal must come before every other filter", envoyFilter.where())
                .isZero();
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void clientGroupHeaderIsStrippedByTheFirstFilter(Manifest envoyFilter) {
        // The same first filter as the route header (the test above places it): before jwt_authn, which appends
        // the verified group rather than replacing a client's copy, and before ext_proc.
        DataPath path = DataPath.of(envoyFilter);
        HeaderMutation strip = EnvoyProtos.unpack(path.strip().valueAs(HttpFilter.class).getTypedConfig(),
                HeaderMutation.class);
        DataPathRules.removesGroupHeader(path.strip().where(), strip.getMutations().getRequestMutationsList());
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void extProcFailsClosedAndSeesRequestHeadersOnly(Manifest envoyFilter) {
        DataPath path = DataPath.of(envoyFilter);
        assertThat(path.extProc().operation()).isEqualTo("INSERT_BEFORE");
        assertThat(path.extProc().subFilter()).isEqualTo(ROUTER);
        DataPathRules.extProcFilter(path.extProc().where(), path.extProcFilter(), UpstreamCarrier.HEADER);
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void replicaClusterIsOriginalDstDrivenByTheServiceHeader(Manifest envoyFilter) {
        DataPath path = DataPath.of(envoyFilter);
        assertThat(path.cluster().operation()).isEqualTo("ADD");
        assertThat(path.cluster().context()).isEqualTo(path.extProc().context());
        DataPathRules.replicaCluster(path.cluster().where(), path.replicaCluster(), UpstreamCarrier.HEADER);
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void sparkRouteGoesToTheReplicaClusterWithoutDeadline(Manifest envoyFilter) {
        DataPath path = DataPath.of(envoyFilter);
        assertThat(path.route().operation()).isEqualTo("MERGE");
        assertThat(path.route().context()).isEqualTo(path.extProc().context());
        assertThat(path.route().match().path("routeConfiguration").path("portNumber").asInt())
                .as("%s: route and filters on the same port", path.route().where())
                .isEqualTo(path.extProc().listenerPort());
        assertThat(path.route().match().path("routeConfiguration").path("vhost").path("route").path("name").asText())
                .as("%s: a route patch without a route name would hit every route on the port", path.route().where())
                .isNotEmpty();
        DataPathRules.replicaRoute(path.route().where(), path.route().valueAs(Route.class).getRoute(),
                path.replicaCluster().getName());
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void extProcClusterIsIstiosHttp2ClusterOfTheShippedService(Manifest envoyFilter) {
        DataPath path = DataPath.of(envoyFilter);
        String clusterName = path.extProcFilter().getGrpcService().getEnvoyGrpc().getClusterName();
        String[] parts = clusterName.split("\\|", -1);
        assertThat(parts).as("%s: Istio cluster name outbound|<port>|<subset>|<host>", clusterName).hasSize(4);
        assertThat(parts[0]).isEqualTo("outbound");

        Manifest service = Manifest.only("Service");
        assertThat(parts[3]).as("%s: ext_proc cluster host", envoyFilter.where())
                .isEqualTo(service.name() + "." + service.namespace() + ".svc.cluster.local");
        JsonNode port = findPort(service, Integer.parseInt(parts[1]));
        assertThat(port.path("appProtocol").asText())
                .as("%s: Istio makes the cluster HTTP/2 only for a gRPC port", service.where())
                .isEqualTo("grpc");
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void everyHeaderNameMentionedIsOneTheServiceUses(Manifest envoyFilter) {
        DataPathRules.mentionsOnlyKnownHeaders(envoyFilter.where(), envoyFilter.spec());
    }

    @Test
    void gatewayPatchesMatchTheShippedGatewayAndVirtualService() {
        Manifest envoyFilter = envoyFilters()
                .filter(f -> EnvoyFilterPatch.of(f).stream().allMatch(p -> p.context().equals("GATEWAY")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no EnvoyFilter for the ingress gateway"));
        DataPath path = DataPath.of(envoyFilter);
        Manifest gateway = Manifest.only("Gateway");
        Manifest virtualService = Manifest.ofKind("VirtualService").stream()
                .filter(vs -> vs.spec().path("gateways").toString().contains(gateway.namespace() + "/" + gateway.name()))
                .findFirst().orElseThrow(() -> new AssertionError("no VirtualService bound to the Gateway"));

        assertThat(envoyFilter.spec().path("workloadSelector").path("labels"))
                .as("the EnvoyFilter must select the gateway pods the Gateway binds to")
                .isEqualTo(gateway.spec().path("selector"));
        List<Integer> gatewayPorts = new ArrayList<>();
        gateway.spec().path("servers").forEach(s -> gatewayPorts.add(s.path("port").path("number").asInt()));
        assertThat(gatewayPorts).as("gateway server ports").containsExactly(path.extProc().listenerPort());

        assertThat(virtualService.spec().path("gateways"))
                .extracting(JsonNode::asText)
                .contains(gateway.namespace() + "/" + gateway.name());
        String routeName = path.route().match().path("routeConfiguration").path("vhost").path("route")
                .path("name").asText();
        JsonNode http = findHttpRoute(virtualService, routeName);
        assertThat(http.path("timeout").asText()).as("VirtualService timeout").isEqualTo("0s");
        assertThat(http.path("retries").path("attempts").asInt(-1))
                .as("the Spark client retries itself; the gateway must not re-send a plan")
                .isZero();
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void patchedRouteComesFromAVirtualServiceWithoutRetries(Manifest envoyFilter) {
        // Istio's default route retries twice on connect-failure, refused-stream, unavailable and cancelled
        // (pilot/pkg/networking/core/route/retry/retry.go, DefaultPolicy); a retried ExecutePlan can run a plan
        // twice. Only a VirtualService with retries.attempts 0 removes the policy: an EnvoyFilter MERGE of
        // num_retries 0 is a no-op, because proto merging skips zero values.
        DataPath path = DataPath.of(envoyFilter);
        JsonNode vhost = path.route().match().path("routeConfiguration").path("vhost");
        String routeName = vhost.path("route").path("name").asText();
        List<JsonNode> routes = new ArrayList<>();
        for (Manifest vs : Manifest.ofKind("VirtualService")) {
            boolean bound = path.route().context().equals("GATEWAY")
                    ? !vs.spec().path("gateways").toString().contains("\"mesh\"")
                    : vs.spec().path("gateways").toString().contains("\"mesh\"")
                            && vhost.path("name").asText().startsWith(vs.spec().path("hosts").path(0).asText() + ":");
            if (bound) {
                vs.spec().path("http").forEach(h -> {
                    if (h.path("name").asText().equals(routeName)) {
                        routes.add(h);
                    }
                });
            }
        }
        assertThat(routes).as("%s: the VirtualService route '%s' that this patch merges into", path.route().where(),
                routeName).hasSize(1);
        assertThat(routes.get(0).path("retries").path("attempts").asInt(-1))
                .as("%s: retries.attempts", routeName).isZero();
        assertThat(routes.get(0).path("timeout").asText()).isEqualTo("0s");
        Route patched = path.route().valueAs(Route.class);
        assertThat(patched.getRoute().hasRetryPolicy()).as("%s adds no retry policy", path.route().where()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("envoyFilters")
    void bodyBufferIsBoundedToWhatTheShippedServiceAccepts(Manifest envoyFilter) {
        DataPath path = DataPath.of(envoyFilter);
        List<EnvoyFilterPatch> windows = EnvoyFilterPatch.of(envoyFilter).stream()
                .filter(p -> p.applyTo().equals("NETWORK_FILTER")).toList();
        assertThat(windows).as("%s: one connection-manager patch bounding the stream window", envoyFilter.where())
                .hasSize(1);
        EnvoyFilterPatch window = windows.get(0);
        assertThat(window.operation()).isEqualTo("MERGE");
        assertThat(window.context()).isEqualTo(path.extProc().context());
        assertThat(window.listenerPort()).isEqualTo(path.extProc().listenerPort());
        HttpConnectionManager hcm = EnvoyProtos.unpack(
                window.valueAs(io.envoyproxy.envoy.config.listener.v3.Filter.class).getTypedConfig(),
                HttpConnectionManager.class);
        DataPathRules.streamWindowFitsTheService(window.where(), hcm, ShippedService.maxBufferedBodyBytes());
    }

    /** Applies the EnvoyFilter's HTTP_FILTER patches, in order, the way Istio does, to a typical chain. */
    static List<String> applyHttpFilterPatches(Manifest envoyFilter) {
        List<String> chain = new ArrayList<>(ISTIO_HTTP_FILTERS);
        for (EnvoyFilterPatch patch : EnvoyFilterPatch.of(envoyFilter)) {
            if (!patch.applyTo().equals("HTTP_FILTER")) {
                continue;
            }
            String name = patch.valueAs(HttpFilter.class).getName();
            String anchor = patch.subFilter();
            int at = anchor == null ? -1 : chain.indexOf(anchor);
            switch (patch.operation()) {
                case "INSERT_FIRST" -> chain.add(0, name);
                case "INSERT_BEFORE" -> chain.add(Math.max(at, 0), name);
                case "INSERT_AFTER" -> chain.add(at < 0 ? chain.size() : at + 1, name);
                case "ADD" -> chain.add(name);
                default -> throw new AssertionError(patch.where() + ": unexpected operation " + patch.operation());
            }
        }
        return chain;
    }

    private static void checkIstioFields(String where, String type, JsonNode node) {
        Set<String> allowed = ISTIO_FIELDS.get(type);
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            assertThat(allowed).as("%s: field %s.%s", where, type, field).contains(field);
            JsonNode child = node.get(field);
            if (field.equals("configPatches")) {
                child.forEach(p -> checkIstioFields(where, "configPatch", p));
            } else if (ISTIO_FIELDS.containsKey(field) && child.isObject()) {
                checkIstioFields(where, field, child);
            }
        }
    }

    private static JsonNode findPort(Manifest service, int port) {
        for (JsonNode p : service.spec().path("ports")) {
            if (p.path("port").asInt() == port) {
                return p;
            }
        }
        throw new AssertionError(service.where() + ": no port " + port);
    }

    private static JsonNode findHttpRoute(Manifest virtualService, String name) {
        for (JsonNode http : virtualService.spec().path("http")) {
            if (http.path("name").asText().equals(name)) {
                return http;
            }
        }
        throw new AssertionError(virtualService.where() + ": no http route named " + name);
    }
}
