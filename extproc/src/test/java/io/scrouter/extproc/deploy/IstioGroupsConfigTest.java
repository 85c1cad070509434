package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.header_mutation.v3.HeaderMutation;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code istio/components/groups} and {@code istio/overlays/groups}: the gateway writes the caller's group from a
 * verified token, denies Spark Connect requests without one, and the router of the overlay gets a groups section.
 * The rendered result, parameters applied, is checked by {@link RenderedInstallTest}.
 */
class IstioGroupsConfigTest {

    private static final Path COMPONENT = RepoFiles.root().resolve("istio/components/groups");
    private static final Path OVERLAY = RepoFiles.root().resolve("istio/overlays/groups");

    private static Manifest requestAuthentication() {
        return Manifest.only("RequestAuthentication");
    }

    private static Manifest gatewayFilter() {
        return Manifest.ofKind("EnvoyFilter").stream()
                .filter(f -> EnvoyFilterPatch.of(f).stream().allMatch(p -> p.context().equals("GATEWAY")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no EnvoyFilter for the ingress gateway"));
    }

    /** The AuthorizationPolicies that act on the gateway pods (the router's own select the router's pods). */
    private static List<Manifest> gatewayPolicies() {
        JsonNode gatewayLabels = gatewayFilter().spec().path("workloadSelector").path("labels");
        return Manifest.ofKind("AuthorizationPolicy").stream()
                .filter(p -> p.spec().path("selector").path("matchLabels").equals(gatewayLabels))
                .toList();
    }

    private static String gatewayPort() {
        return String.valueOf(Manifest.only("Gateway").spec().path("servers").path(0).path("port").path("number")
                .asInt());
    }

    @Test
    void theComponentsObjectsAreInTheComponentDirectory() {
        assertThat(requestAuthentication().file()).startsWith(COMPONENT);
        assertThat(gatewayPolicies()).isNotEmpty().allSatisfy(p -> assertThat(p.file()).startsWith(COMPONENT));
    }

    @Test
    void aVerifiedClaimBecomesTheGroupHeader() {
        Manifest ra = requestAuthentication();
        assertThat(ra.doc().path("apiVersion").asText()).isEqualTo("security.istio.io/v1");
        JsonNode rules = ra.spec().path("jwtRules");
        assertThat(rules).as("%s: one jwtRule (each rule is a provider, and two tokens would give two groups)",
                ra.where()).hasSize(1);
        JsonNode rule = rules.get(0);
        List<String> headers = new ArrayList<>();
        rule.path("outputClaimToHeaders").forEach(c -> {
            headers.add(c.path("header").asText().toLowerCase(Locale.ROOT));
            assertThat(c.path("claim").asText()).as("%s: claim", ra.where()).isNotBlank();
        });
        assertThat(headers).as("%s: outputClaimToHeaders", ra.where()).containsExactly(RouteHeaders.GROUP);
        // Istio's header validation (validateJwtRule) and CRD pattern accept only these characters.
        assertThat(rule.path("outputClaimToHeaders").path(0).path("header").asText()).matches("^[-_A-Za-z0-9]+$");
        assertThat(rule.path("issuer").asText()).isNotBlank();
        assertThat(rule.path("audiences")).as("%s: audiences", ra.where()).isNotEmpty();
        assertThat(rule.path("jwksUri").asText()).startsWith("https://");
    }

    @Test
    void theTokenComesOnlyFromTheAuthorizationHeaderAndStaysAtTheGateway() {
        Manifest ra = requestAuthentication();
        JsonNode rule = ra.spec().path("jwtRules").path(0);
        assertThat(rule.path("fromHeaders")).as("%s: fromHeaders", ra.where()).hasSize(1);
        assertThat(rule.path("fromHeaders").path(0).path("name").asText()).isEqualToIgnoringCase("authorization");
        assertThat(rule.path("fromHeaders").path(0).path("prefix").asText()).isEqualTo("Bearer ");
        assertThat(rule.path("fromParams").isMissingNode()).as("%s: no fromParams", ra.where()).isTrue();
        assertThat(rule.path("fromCookies").isMissingNode()).as("%s: no fromCookies", ra.where()).isTrue();
        assertThat(rule.path("forwardOriginalToken").asBoolean(false)).as("%s: forwardOriginalToken", ra.where())
                .isFalse();
    }

    @Test
    void requestsWithoutATokenAreDeniedOnTheSparkConnectPort() {
        // A RequestAuthentication alone admits a request without a token (Istio configures jwt_authn with
        // allow_missing: pilot/pkg/security/authn/policy_applier.go, convertToEnvoyJwtConfig).
        List<Manifest> denying = gatewayPolicies().stream()
                .filter(p -> p.spec().path("action").asText().equals("DENY"))
                .filter(p -> deniesWithoutPrincipalOn(p, gatewayPort()))
                .toList();
        assertThat(denying).as("an AuthorizationPolicy on the gateway pods that denies requests without a request "
                + "principal on port %s", gatewayPort()).hasSize(1);
        Manifest policy = denying.get(0);
        assertThat(policy.doc().path("apiVersion").asText()).isEqualTo("security.istio.io/v1");
        assertThat(policy.namespace()).isEqualTo(requestAuthentication().namespace());
    }

    /** True if one of the policy's rules matches every request without a principal on {@code port}, nothing less. */
    private static boolean deniesWithoutPrincipalOn(Manifest policy, String port) {
        for (JsonNode rule : policy.spec().path("rules")) {
            if (rule.has("when") || rule.path("from").size() != 1 || rule.path("to").size() != 1) {
                continue;
            }
            JsonNode source = rule.path("from").path(0).path("source");
            JsonNode operation = rule.path("to").path(0).path("operation");
            List<String> ports = new ArrayList<>();
            operation.path("ports").forEach(p -> ports.add(p.asText()));
            boolean onlyPorts = operation.size() == 1 && ports.contains(port);
            boolean anyoneWithoutPrincipal = source.size() == 1
                    && source.path("notRequestPrincipals").size() == 1
                    && source.path("notRequestPrincipals").path(0).asText().equals("*");
            if (onlyPorts && anyoneWithoutPrincipal) {
                return true;
            }
        }
        return false;
    }

    @Test
    void thePoliciesActOnTheGatewayTheEnvoyFilterPatches() {
        Manifest filter = gatewayFilter();
        JsonNode labels = filter.spec().path("workloadSelector").path("labels");
        Manifest ra = requestAuthentication();
        assertThat(ra.spec().path("selector").path("matchLabels")).as("%s selector", ra.where()).isEqualTo(labels);
        assertThat(ra.namespace()).as("%s: a selector acts only in the policy's own namespace", ra.where())
                .isEqualTo(filter.namespace());
        assertThat(gatewayPolicies()).allSatisfy(p -> assertThat(p.namespace()).as(p.where())
                .isEqualTo(filter.namespace()));
    }

    @Test
    void theGroupHeaderIsGoneBeforeJwtAuthnAndExtProcRunsAfterRbac() {
        Manifest filter = gatewayFilter();
        List<EnvoyFilterPatch> patches = EnvoyFilterPatch.of(filter);
        String strip = httpFilterName(patches, HeaderMutation.getDescriptor().getFullName());
        String extProc = httpFilterName(patches, ExternalProcessor.getDescriptor().getFullName());
        List<String> chain = IstioEnvoyFilterTest.applyHttpFilterPatches(filter);
        assertThat(chain.indexOf(strip)).as("resulting chain %s", chain).isNotNegative()
                .isLessThan(chain.indexOf(IstioEnvoyFilterTest.JWT_AUTHN));
        assertThat(chain.indexOf(IstioEnvoyFilterTest.RBAC)).as("resulting chain %s", chain)
                .isGreaterThan(chain.indexOf(IstioEnvoyFilterTest.JWT_AUTHN))
                .isLessThan(chain.indexOf(extProc));
    }

    private static String httpFilterName(List<EnvoyFilterPatch> patches, String type) {
        return patches.stream()
                .filter(p -> p.applyTo().equals("HTTP_FILTER"))
                .map(p -> p.valueAs(HttpFilter.class))
                .filter(f -> f.getTypedConfig().getTypeUrl().endsWith("/" + type))
                .map(HttpFilter::getName)
                .findFirst()
                .orElseThrow(() -> new AssertionError(type + " not patched in"));
    }

    @Test
    void theComponentTurnsTlsOnForTheSparkConnectServer() {
        // Spark Connect clients send a token only over TLS; Istio terminates TLS only for an HTTPS server
        // (pkg/config/gateway/gateway.go, IsHTTPSServerWithTLSTermination). RenderedInstallTest checks the result.
        JsonNode kustomization = EnvoyProtos.yamlTree(RepoFiles.read(COMPONENT.resolve(Manifest.KUSTOMIZATION)));
        List<JsonNode> gatewayPatches = new ArrayList<>();
        kustomization.path("patches").forEach(p -> {
            if (p.path("target").path("kind").asText().equals("Gateway")) {
                gatewayPatches.add(p);
            }
        });
        assertThat(gatewayPatches).hasSize(1);
        assertThat(gatewayPatches.get(0).path("target").path("name").asText())
                .isEqualTo(Manifest.only("Gateway").name());
        Map<String, JsonNode> ops = new java.util.HashMap<>();
        EnvoyProtos.yamlTree(gatewayPatches.get(0).path("patch").asText())
                .forEach(op -> ops.put(op.path("path").asText(), op.path("value")));
        assertThat(ops.get("/spec/servers/0/port/protocol").asText()).isEqualTo("HTTPS");
        assertThat(ops.get("/spec/servers/0/tls").path("mode").asText()).isEqualTo("SIMPLE");
        assertThat(ops.get("/spec/servers/0/tls").path("credentialName").asText()).isNotBlank();
    }

    @Test
    void theOverlaysRouterConfigIsTheBaseConfigWithAGroupsSection() {
        String config = overlayRouterConfig();
        ObjectNode withGroups = (ObjectNode) EnvoyProtos.yamlTree(config);
        assertThat(withGroups.has("groups")).isTrue();
        withGroups.remove("groups");
        JsonNode base = EnvoyProtos.yamlTree(Manifest.only("ConfigMap").doc().path("data").path("scrouter.yaml")
                .asText());
        assertThat(withGroups).as("overlays/groups must carry base/configmap.yaml's router config, plus groups; "
                + "copy any change of the base into it").isEqualTo(base);
    }

    @Test
    void theRouterAcceptsTheOverlaysGroupsSection() {
        RouterConfig router = ConfigLoader.parse(overlayRouterConfig(),
                Map.of("SCROUTER_REDIS_ADDRESS", "redis://127.0.0.1:6379"));
        assertThat(router.groups()).isPresent();
        RouterConfig.Groups groups = router.groups().get();
        // Every request group may fall back to the shared replicas, after its own.
        assertThat(groups.allow()).isNotEmpty().allSatisfy((requestGroup, order) ->
                assertThat(order).as("fallback order of %s", requestGroup).startsWith(requestGroup).endsWith("shared"));
    }

    @Test
    void theReadmesGroupsExamplesAreTheOverlaysAndTheRouterLoadsThem() {
        JsonNode overlay = EnvoyProtos.yamlTree(overlayRouterConfig()).path("groups");
        for (String[] readme : new String[][] {{"istio/README.md", "## Replica groups with Istio"},
                {"envoy/README.md", "## Replica groups"}}) {
            List<String> examples = groupsExamples(RepoFiles.read(RepoFiles.root().resolve(readme[0])), readme[1]);
            assertThat(examples).as("%s, section %s: a yaml block with a groups section", readme[0], readme[1])
                    .isNotEmpty();
            for (String example : examples) {
                RouterConfig router = ConfigLoader.parse(example,
                        Map.of("SCROUTER_REDIS_ADDRESS", "redis://127.0.0.1:6379"));
                assertThat(router.groups()).as("%s: groups loaded", readme[0]).isPresent();
                assertThat(EnvoyProtos.yamlTree(example).path("groups"))
                        .as("%s: the example must be the groups section overlays/groups ships", readme[0])
                        .isEqualTo(overlay);
            }
        }
    }

    /** The fenced yaml blocks of one README section that start with {@code groups:}, their indentation removed. */
    private static List<String> groupsExamples(String markdown, String heading) {
        int start = markdown.indexOf("\n" + heading + "\n");
        assertThat(start).as("section %s", heading).isNotNegative();
        int end = markdown.indexOf("\n## ", start + heading.length() + 1);
        String[] lines = markdown.substring(start, end < 0 ? markdown.length() : end).split("\n", -1);
        List<String> blocks = new ArrayList<>();
        StringBuilder block = null;
        int indent = 0;
        for (String line : lines) {
            String trimmed = line.strip();
            if (block == null && trimmed.equals("```yaml")) {
                block = new StringBuilder();
                indent = line.indexOf('`');
            } else if (block != null && trimmed.equals("```")) {
                if (block.toString().startsWith("groups:")) {
                    blocks.add(block.toString());
                }
                block = null;
            } else if (block != null) {
                block.append(line.length() >= indent ? line.substring(indent) : line.strip()).append('\n');
            }
        }
        return blocks;
    }

    /** The router config that overlays/groups writes into the ConfigMap. */
    static String overlayRouterConfig() {
        JsonNode kustomization = EnvoyProtos.yamlTree(RepoFiles.read(OVERLAY.resolve(Manifest.KUSTOMIZATION)));
        List<String> values = new ArrayList<>();
        kustomization.path("patches").forEach(p -> {
            if (p.path("target").path("kind").asText().equals("ConfigMap")) {
                EnvoyProtos.yamlTree(p.path("patch").asText()).forEach(op -> {
                    if (op.path("path").asText().equals("/data/scrouter.yaml")) {
                        values.add(op.path("value").asText());
                    }
                });
            }
        });
        assertThat(values).as("overlays/groups replaces the ConfigMap's scrouter.yaml once").hasSize(1);
        return values.get(0);
    }
}
