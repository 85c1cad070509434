package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every install variant rendered by {@code kubectl kustomize}, as {@code kubectl apply -k} would send it, and
 * checked object by object against the parameters the variant was given: namespace, gateway namespace,
 * selector, service account and port, and image land everywhere they must; the gateway EnvoyFilter stays in
 * the gateway's namespace; only the gateway (and, in the sidecar variant, the labelled clients) may call
 * ext_proc; only routers and publishers may reach Redis; with replica groups, the gateway's token policies sit in
 * the gateway's namespace, on its pods and port, and the Spark Connect server speaks TLS. Needs {@code kubectl}
 * (1.32 ships kustomize 5.5); skipped with a message where it is missing.
 */
class RenderedInstallTest {

    private static final int EXTPROC_PORT = 9002;
    private static final String ROUTER_LABEL = "app.kubernetes.io/name";
    private static final String ROUTER = "scrouter-extproc";

    /** A directory kustomize builds, with the parameters file it is meant to apply. */
    record Variant(String dir, String parameters, boolean sidecar, boolean monitoring, boolean networkPolicy,
                   boolean groups) {
        @Override
        public String toString() {
            return dir;
        }
    }

    static Stream<Variant> variants() throws IOException {
        return Stream.of(
                new Variant("istio", "istio/parameters/parameters.yaml", false, false, false, false),
                new Variant("istio/overlays/sidecar", "istio/parameters/parameters.yaml", true, false, false, false),
                new Variant("istio/overlays/example", "istio/overlays/example/parameters.yaml", false, true, true,
                        false),
                new Variant("istio/overlays/groups", "istio/parameters/parameters.yaml", false, false, false, true),
                groupsWithEveryParameterChanged());
    }

    /**
     * components/groups with the example overlay's parameters, where every value differs from the one written in
     * the files, so a field that components/parameters fails to reach shows. Written under target/, because
     * kustomize accepts only relative paths to the kustomizations it builds on.
     */
    private static Variant groupsWithEveryParameterChanged() throws IOException {
        String dir = "extproc/target/kustomize/groups-example-parameters";
        Path root = RepoFiles.root().resolve(dir);
        Files.createDirectories(root);
        Files.copy(RepoFiles.root().resolve("istio/overlays/example/parameters.yaml"), root.resolve("parameters.yaml"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        String istio = root.relativize(RepoFiles.root().resolve("istio")).toString().replace('\\', '/');
        Files.writeString(root.resolve(Manifest.KUSTOMIZATION), String.join("\n",
                "apiVersion: kustomize.config.k8s.io/v1beta1",
                "kind: Kustomization",
                "resources:",
                "- " + istio + "/base",
                "- parameters.yaml",
                "components:",
                "- " + istio + "/components/groups",
                "- " + istio + "/components/parameters",
                ""));
        return new Variant(dir, dir + "/parameters.yaml", false, false, false, true);
    }

    // Per test rather than once per class, so that each check is reported as skipped, with the reason.
    @BeforeEach
    void requireKubectl() throws InterruptedException {
        assumeTrue(kubectlAvailable(), "skipped: needs `kubectl` (1.32, with kustomize 5.5) on PATH to render the "
                + "kustomizations; Debian's own package is far older");
    }

    private static boolean kubectlAvailable() throws InterruptedException {
        try {
            Process p = new ProcessBuilder("kubectl", "version", "--client").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @org.junit.jupiter.api.Test
    void everyOverlayIsRendered() throws IOException {
        try (Stream<Path> dirs = Files.list(RepoFiles.root().resolve("istio/overlays"))) {
            List<String> overlays = dirs.filter(Files::isDirectory).map(RepoFiles::relative).toList();
            assertThat(variants().map(Variant::dir).toList()).containsAll(overlays);
        }
    }

    private static List<JsonNode> render(Variant v) throws IOException, InterruptedException {
        Path out = Files.createTempFile("kustomize", ".yaml");
        try {
            Process p = new ProcessBuilder("kubectl", "kustomize", RepoFiles.root().resolve(v.dir()).toString())
                    .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.PIPE).start();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("kubectl kustomize %s finishes", v).isTrue();
            assertThat(p.exitValue()).as("kubectl kustomize %s: %s", v, err).isZero();
            return EnvoyProtos.yamlDocuments(Files.readString(out));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static JsonNode parameters(Variant v) {
        JsonNode doc = EnvoyProtos.yamlTree(RepoFiles.read(RepoFiles.root().resolve(v.parameters())));
        assertThat(doc.path("kind").asText()).isEqualTo("InstallParameters");
        return doc.path("spec");
    }

    private static List<JsonNode> ofKind(List<JsonNode> docs, String kind) {
        return docs.stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
    }

    private static JsonNode one(List<JsonNode> docs, String kind, String name) {
        List<JsonNode> found = ofKind(docs, kind).stream()
                .filter(d -> d.path("metadata").path("name").asText().equals(name)).toList();
        assertThat(found).as("%s/%s rendered", kind, name).hasSize(1);
        return found.get(0);
    }

    private static JsonNode routerPodLabels(List<JsonNode> docs) {
        return one(docs, "Deployment", ROUTER).at("/spec/template/metadata/labels");
    }

    private static boolean selects(JsonNode matchLabels, JsonNode labels) {
        if (matchLabels.isMissingNode() || matchLabels.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, JsonNode> e : matchLabels.properties()) {
            if (!labels.path(e.getKey()).asText().equals(e.getValue().asText())) {
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void everyObjectLandsInItsNamespaceAndTheGatewayFilterStaysWithTheGateway(Variant v) throws Exception {
        List<JsonNode> docs = render(v);
        JsonNode p = parameters(v);
        String namespace = p.path("namespace").asText();

        assertThat(docs).as("the parameters object is local: kustomize must not emit it")
                .noneMatch(d -> d.path("kind").asText().equals("InstallParameters"));
        assertThat(ofKind(docs, "Namespace")).singleElement()
                .satisfies(n -> assertThat(n.at("/metadata/name").asText()).isEqualTo(namespace));
        for (JsonNode d : docs) {
            String kind = d.path("kind").asText();
            String where = kind + "/" + d.at("/metadata/name").asText();
            if (kind.equals("Namespace")) {
                continue;
            }
            if (kind.equals("EnvoyFilter")) {
                // An EnvoyFilter with a workloadSelector acts only in its own namespace.
                String expected = d.at("/metadata/name").asText().equals("scrouter-gateway")
                        ? p.path("gatewayNamespace").asText() : "istio-system";
                assertThat(d.at("/metadata/namespace").asText()).as(where).isEqualTo(expected);
            } else if (actsOnTheGateway(d, p)) {
                // So does a security policy with a selector (components/groups).
                assertThat(d.at("/metadata/namespace").asText()).as(where)
                        .isEqualTo(p.path("gatewayNamespace").asText());
            } else {
                assertThat(d.at("/metadata/namespace").asText()).as(where).isEqualTo(namespace);
            }
        }
        assertThat(ofKind(docs, "EnvoyFilter")).hasSize(v.sidecar() ? 2 : 1);
        assertThat(ofKind(docs, "RequestAuthentication")).hasSize(v.groups() ? 1 : 0);
    }

    /** A RequestAuthentication or AuthorizationPolicy that selects the gateway pods. */
    private static boolean actsOnTheGateway(JsonNode doc, JsonNode parameters) {
        String kind = doc.path("kind").asText();
        return (kind.equals("RequestAuthentication") || kind.equals("AuthorizationPolicy"))
                && doc.at("/spec/selector/matchLabels/istio").asText().equals(parameters.path("gatewaySelector")
                .asText());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void withGroupsTheGatewayWantsATokenOverTlsAndWritesTheGroup(Variant v) throws Exception {
        List<JsonNode> docs = render(v);
        JsonNode p = parameters(v);
        JsonNode server = one(docs, "Gateway", "spark-connect").at("/spec/servers/0");
        List<JsonNode> authentications = ofKind(docs, "RequestAuthentication");
        List<JsonNode> gatewayPolicies = ofKind(docs, "AuthorizationPolicy").stream()
                .filter(d -> actsOnTheGateway(d, p)).toList();
        if (!v.groups()) {
            assertThat(authentications).isEmpty();
            assertThat(gatewayPolicies).isEmpty();
            assertThat(server.at("/port/protocol").asText()).isEqualTo("GRPC");
            return;
        }
        assertThat(server.at("/port/protocol").asText()).as("Istio terminates TLS only for HTTPS servers")
                .isEqualTo("HTTPS");
        assertThat(server.at("/tls/mode").asText()).isEqualTo("SIMPLE");
        assertThat(server.at("/port/number").asInt()).isEqualTo(p.path("gatewayPort").asInt());

        JsonNode authentication = authentications.get(0);
        assertThat(authentication.at("/metadata/namespace").asText()).isEqualTo(p.path("gatewayNamespace").asText());
        assertThat(authentication.at("/spec/selector/matchLabels/istio").asText())
                .isEqualTo(p.path("gatewaySelector").asText());
        assertThat(authentication.at("/spec/jwtRules/0/outputClaimToHeaders/0/header").asText())
                .isEqualTo(RouteHeaders.GROUP);

        assertThat(gatewayPolicies).singleElement().satisfies(policy -> {
            assertThat(policy.at("/spec/action").asText()).isEqualTo("DENY");
            assertThat(policy.at("/metadata/namespace").asText()).isEqualTo(p.path("gatewayNamespace").asText());
            JsonNode port = policy.at("/spec/rules/0/to/0/operation/ports/0");
            assertThat(port.isTextual()).as("AuthorizationPolicy ports are strings: %s", port).isTrue();
            assertThat(port.asText()).isEqualTo(p.path("gatewayPort").asText());
            assertThat(policy.at("/spec/rules/0/from/0/source/notRequestPrincipals/0").asText()).isEqualTo("*");
        });

        JsonNode gatewayFilter = one(docs, "EnvoyFilter", "scrouter-gateway");
        assertThat(gatewayFilter.at("/spec/configPatches/0/patch/value/typed_config/mutations/request_mutations")
                .findValuesAsText("remove")).contains(RouteHeaders.GROUP);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void gatewayServiceAndEnvoyFiltersAgreeWithTheParameters(Variant v) throws Exception {
        List<JsonNode> docs = render(v);
        JsonNode p = parameters(v);
        JsonNode service = one(docs, "Service", ROUTER);
        int servicePort = -1;
        for (JsonNode port : service.at("/spec/ports")) {
            if (port.path("appProtocol").asText().equals("grpc")) {
                servicePort = port.path("port").asInt();
            }
        }
        String cluster = "outbound|" + servicePort + "||" + ROUTER + "." + service.at("/metadata/namespace").asText()
                + ".svc.cluster.local";
        for (JsonNode filter : ofKind(docs, "EnvoyFilter")) {
            List<String> clusters = new ArrayList<>();
            filter.at("/spec/configPatches").forEach(patch -> {
                JsonNode name = patch.at("/patch/value/typed_config/grpc_service/envoy_grpc/cluster_name");
                if (!name.isMissingNode()) {
                    clusters.add(name.asText());
                }
            });
            assertThat(clusters).as("%s ext_proc cluster", filter.at("/metadata/name").asText())
                    .containsExactly(cluster);
        }

        JsonNode gateway = one(docs, "Gateway", "spark-connect");
        JsonNode gatewayFilter = one(docs, "EnvoyFilter", "scrouter-gateway");
        assertThat(gateway.at("/spec/selector/istio").asText()).isEqualTo(p.path("gatewaySelector").asText());
        assertThat(gatewayFilter.at("/spec/workloadSelector/labels")).isEqualTo(gateway.at("/spec/selector"));
        int gatewayPort = p.path("gatewayPort").asInt();
        assertThat(gateway.at("/spec/servers/0/port/number").isInt()).as("a number, not a string").isTrue();
        assertThat(gateway.at("/spec/servers/0/port/number").asInt()).isEqualTo(gatewayPort);
        List<JsonNode> ports = new ArrayList<>();
        gatewayFilter.at("/spec/configPatches").forEach(patch -> {
            JsonNode match = patch.path("match");
            for (String ptr : List.of("/listener/portNumber", "/routeConfiguration/portNumber")) {
                if (!match.at(ptr).isMissingNode()) {
                    ports.add(match.at(ptr));
                }
            }
        });
        assertThat(ports).as("every port-matching patch of the gateway filter").hasSizeGreaterThanOrEqualTo(4)
                .allSatisfy(n -> assertThat(n.isInt() && n.asInt() == gatewayPort).as("%s", n).isTrue());

        JsonNode route = one(docs, "VirtualService", "spark-connect");
        assertThat(route.at("/spec/gateways")).singleElement().satisfies(g -> assertThat(g.asText())
                .isEqualTo(gateway.at("/metadata/namespace").asText() + "/" + gateway.at("/metadata/name").asText()));

        JsonNode pod = one(docs, "Deployment", ROUTER).at("/spec/template/spec");
        assertThat(pod.at("/containers/0/image").asText()).isEqualTo(p.path("image").asText());
        assertThat(pod.path("automountServiceAccountToken").asBoolean(true)).isFalse();
        assertThat(pod.at("/containers/0/resources/requests/memory"))
                .isEqualTo(pod.at("/containers/0/resources/limits/memory"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void onlyTheGatewayAndInTheSidecarVariantTheLabelledClientsMayCallExtProc(Variant v) throws Exception {
        List<JsonNode> docs = render(v);
        JsonNode p = parameters(v);
        JsonNode podLabels = routerPodLabels(docs);
        String gatewayPrincipal = "cluster.local/ns/" + p.path("gatewayNamespace").asText() + "/sa/"
                + p.path("gatewayServiceAccount").asText();

        List<JsonNode> policies = ofKind(docs, "AuthorizationPolicy").stream()
                .filter(ap -> selects(ap.at("/spec/selector/matchLabels"), podLabels)).toList();
        assertThat(policies).as("an ALLOW policy on the router pods (without one, Istio allows everyone)")
                .isNotEmpty().allSatisfy(ap -> assertThat(ap.at("/spec/action").asText("ALLOW")).isEqualTo("ALLOW"));
        List<List<String>> extProcCallers = new ArrayList<>();
        for (JsonNode ap : policies) {
            for (JsonNode rule : ap.at("/spec/rules")) {
                if (!coversPort(rule.path("to"), "/operation/ports", EXTPROC_PORT)) {
                    continue;
                }
                assertThat(rule.path("from").isArray() && !rule.path("from").isEmpty())
                        .as("%s: a rule reaching ext_proc names its callers", ap.at("/metadata/name").asText())
                        .isTrue();
                for (JsonNode from : rule.path("from")) {
                    List<String> who = new ArrayList<>();
                    from.path("source").properties().forEach(e -> e.getValue()
                            .forEach(x -> who.add(e.getKey() + ":" + x.asText())));
                    extProcCallers.add(who);
                }
            }
        }
        List<List<String>> expected = new ArrayList<>();
        expected.add(List.of("principals:" + gatewayPrincipal));
        if (v.sidecar()) {
            expected.add(List.of("namespaces:spark-clients"));
        }
        assertThat(extProcCallers).containsExactlyInAnyOrderElementsOf(expected);

        if (!v.networkPolicy()) {
            assertThat(ofKind(docs, "NetworkPolicy")).isEmpty();
            return;
        }
        JsonNode extproc = one(docs, "NetworkPolicy", ROUTER);
        assertThat(selects(extproc.at("/spec/podSelector/matchLabels"), podLabels)).isTrue();
        List<JsonNode> extProcSources = new ArrayList<>();
        for (JsonNode rule : extproc.at("/spec/ingress")) {
            if (coversPort(rule.path("ports"), "/port", EXTPROC_PORT)) {
                assertThat(rule.path("from").isEmpty()).as("a NetworkPolicy rule reaching ext_proc names peers")
                        .isFalse();
                rule.path("from").forEach(extProcSources::add);
            }
        }
        assertThat(extProcSources).singleElement().satisfies(peer -> {
            assertThat(peer.at("/namespaceSelector/matchLabels"))
                    .isEqualTo(EnvoyProtos.yamlTree("kubernetes.io/metadata.name: " + p.path("gatewayNamespace")
                            .asText()));
            assertThat(peer.at("/podSelector/matchLabels"))
                    .isEqualTo(one(docs, "Gateway", "spark-connect").at("/spec/selector"));
        });

        JsonNode redis = one(docs, "NetworkPolicy", "scrouter-redis");
        JsonNode publisherLabels = EnvoyProtos.yamlDocuments(RepoFiles.read(RepoFiles.root()
                        .resolve("istio/examples/spark-connect-replicas.yaml"))).stream()
                .filter(d -> d.path("kind").asText().equals("StatefulSet")).findFirst().orElseThrow()
                .at("/spec/template/metadata/labels");
        List<JsonNode> redisPeers = new ArrayList<>();
        redis.at("/spec/ingress").forEach(rule -> {
            assertThat(rule.path("from").isEmpty()).as("every Redis rule names its peers").isFalse();
            rule.path("from").forEach(redisPeers::add);
        });
        assertThat(redisPeers).hasSize(2).allSatisfy(peer -> assertThat(
                selects(peer.at("/podSelector/matchLabels"), podLabels)
                        || selects(peer.at("/podSelector/matchLabels"), publisherLabels))
                .as("Redis peer %s is a router or a publisher", peer).isTrue());
        assertThat(redisPeers).anySatisfy(peer -> assertThat(selects(peer.at("/podSelector/matchLabels"),
                podLabels)).isTrue());
        assertThat(redisPeers).anySatisfy(peer -> assertThat(selects(peer.at("/podSelector/matchLabels"),
                publisherLabels)).isTrue());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void monitoringScrapesPortsThePodsDeclare(Variant v) throws Exception {
        List<JsonNode> docs = render(v);
        JsonNode deployment = one(docs, "Deployment", ROUTER);
        List<String> routerPorts = new ArrayList<>();
        deployment.at("/spec/template/spec/containers/0/ports").forEach(port -> routerPorts.add(port.path("name")
                .asText()));
        JsonNode service = one(docs, "Service", ROUTER);
        List<String> serviceTargets = new ArrayList<>();
        service.at("/spec/ports").forEach(port -> serviceTargets.add(port.path("targetPort").asText()));
        assertThat(serviceTargets).as("the Service exposes the metrics port, for a ServiceMonitor")
                .contains("http-metrics");
        assertThat(routerPorts).containsAll(serviceTargets);
        if (!v.monitoring()) {
            assertThat(ofKind(docs, "PodMonitor")).isEmpty();
            return;
        }
        JsonNode routers = one(docs, "PodMonitor", ROUTER);
        assertThat(selects(routers.at("/spec/selector/matchLabels"), routerPodLabels(docs))).isTrue();
        assertThat(routers.at("/spec/podMetricsEndpoints/0/port").asText()).isIn(routerPorts);

        JsonNode replicas = EnvoyProtos.yamlDocuments(RepoFiles.read(RepoFiles.root()
                        .resolve("istio/examples/spark-connect-replicas.yaml"))).stream()
                .filter(d -> d.path("kind").asText().equals("StatefulSet")).findFirst().orElseThrow();
        JsonNode publishers = one(docs, "PodMonitor", "scrouter-publishers");
        assertThat(selects(publishers.at("/spec/selector/matchLabels"), replicas.at("/spec/template/metadata/labels")))
                .isTrue();
        List<String> publisherPorts = new ArrayList<>();
        replicas.at("/spec/template/spec/containers").forEach(c -> c.path("ports")
                .forEach(port -> publisherPorts.add(port.path("name").asText())));
        assertThat(publishers.at("/spec/podMetricsEndpoints/0/port").asText()).isIn(publisherPorts);
        assertThat(ofKind(docs, "PrometheusRule")).hasSize(1);
    }

    /** True if a rule's port list includes {@code port}, or has no port list (then it covers every port). */
    private static boolean coversPort(JsonNode targets, String pointer, int port) {
        if (!targets.isArray() || targets.isEmpty()) {
            return true;
        }
        for (JsonNode t : targets) {
            JsonNode ports = t.at(pointer);
            if (ports.isMissingNode()) {
                return true;
            }
            for (JsonNode p : ports.isArray() ? ports : List.of(ports)) {
                if (p.asText().equals(String.valueOf(port))) {
                    return true;
                }
            }
        }
        return false;
    }
}
