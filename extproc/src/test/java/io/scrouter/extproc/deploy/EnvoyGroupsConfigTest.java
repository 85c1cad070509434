package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtClaimToHeader;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtHeader;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtProvider;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtRequirement;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.RemoteJwks;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.RequirementRule;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code envoy/envoy-groups.yaml}, the bootstrap that sets the caller's group from a verified token: besides the
 * data-path rules every bootstrap follows ({@link StandaloneEnvoyConfigTest}), jwt_authn must run before ext_proc,
 * write the group header from a claim, and let no request reach ext_proc without a valid token. Each rule is also
 * run against a copy broken the way a careless edit would break it, and must fail there.
 */
class EnvoyGroupsConfigTest {

    private static final String FILE = "envoy/envoy-groups.yaml";
    private static final String SHIPPED = RepoFiles.read(RepoFiles.root().resolve(FILE));
    static final String JWT_AUTHN_TYPE = "type.googleapis.com/" + JwtAuthentication.getDescriptor().getFullName();

    private static StandaloneConfig shipped() {
        return StandaloneConfig.parse(FILE, SHIPPED);
    }

    private static StandaloneConfig broken(String from, String to) {
        assertThat(SHIPPED).as("the mistake must apply to the shipped config").contains(from);
        return StandaloneConfig.parse(FILE + " (broken)", SHIPPED.replace(from, to));
    }

    private static JwtAuthentication jwtAuthn(StandaloneConfig config) {
        return EnvoyProtos.unpack(config.httpFilters().get(config.filterIndex(JWT_AUTHN_TYPE)).getTypedConfig(),
                JwtAuthentication.class);
    }

    // The rules, each usable on the shipped file and on a broken copy.

    /**
     * jwt_authn first, ext_proc next: decoder filters run in configuration order on one header map
     * ({@code http/filter_manager.cc}, {@code FilterManager::decodeHeaders}), so only then does ext_proc see the
     * verified group, and a request without a valid token never reaches it.
     */
    static void jwtAuthnRunsBeforeExtProc(StandaloneConfig config) {
        assertThat(config.filterIndex(JWT_AUTHN_TYPE))
                .as("%s: jwt_authn must run before ext_proc", config.name())
                .isLessThan(config.filterIndex(StandaloneConfig.EXT_PROC_TYPE));
    }

    /** The one provider that writes the group header, and the claim it reads. */
    static Map.Entry<String, JwtProvider> groupProvider(StandaloneConfig config) {
        List<Map.Entry<String, JwtProvider>> writers = jwtAuthn(config).getProvidersMap().entrySet().stream()
                .filter(e -> e.getValue().getClaimToHeadersList().stream()
                        .anyMatch(c -> c.getHeaderName().toLowerCase(Locale.ROOT).equals(RouteHeaders.GROUP)))
                .toList();
        assertThat(writers)
                .as("%s: exactly one jwt_authn provider writes %s (two would give a request two group headers)",
                        config.name(), RouteHeaders.GROUP)
                .hasSize(1);
        return writers.get(0);
    }

    static void claimBecomesTheGroupHeader(StandaloneConfig config) {
        JwtProvider provider = groupProvider(config).getValue();
        List<JwtClaimToHeader> toGroup = provider.getClaimToHeadersList().stream()
                .filter(c -> c.getHeaderName().toLowerCase(Locale.ROOT).equals(RouteHeaders.GROUP))
                .toList();
        assertThat(toGroup).as("%s: one claim_to_headers entry for %s", config.name(), RouteHeaders.GROUP)
                .singleElement()
                .satisfies(c -> assertThat(c.getClaimName()).as("claim_name").isNotBlank());
        assertThat(provider.getIssuer()).as("%s: the provider checks an issuer", config.name()).isNotBlank();
        assertThat(provider.getAudiencesList()).as("%s: the provider checks an audience", config.name())
                .isNotEmpty();
    }

    /**
     * Only {@code Authorization: Bearer}: with no location set jwt_authn also reads the {@code access_token}
     * query parameter ({@code jwt_authn/extractor.cc}, {@code ExtractorImpl::addProvider}), and every valid token
     * it finds adds a group header.
     */
    static void tokenComesOnlyFromTheAuthorizationHeader(StandaloneConfig config) {
        JwtProvider provider = groupProvider(config).getValue();
        assertThat(provider.getFromHeadersList())
                .as("%s: from_headers", config.name())
                .extracting(h -> h.getName().toLowerCase(Locale.ROOT), JwtHeader::getValuePrefix)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("authorization", "Bearer "));
        assertThat(provider.getFromParamsList()).as("%s: from_params", config.name()).isEmpty();
        assertThat(provider.getFromCookiesList()).as("%s: from_cookies", config.name()).isEmpty();
    }

    /**
     * Every route needs the provider's token, with no way around it: the first rule matching the route's prefix
     * must require the provider itself ({@code ProviderVerifierImpl}: no token is 401), not a list that allows a
     * missing or failed token; no route may turn jwt_authn off per route; no CORS bypass
     * ({@code jwt_authn/filter.cc}, {@code Filter::decodeHeaders}; {@code filter_config.h}, {@code findVerifier}).
     */
    static void everyRouteRequiresAValidToken(StandaloneConfig config) {
        String provider = groupProvider(config).getKey();
        JwtAuthentication jwt = jwtAuthn(config);
        assertThat(jwt.getBypassCorsPreflight()).as("%s: bypass_cors_preflight skips verification", config.name())
                .isFalse();
        assertThat(jwt.getFilterStateRules().getName()).as("%s: filter_state_rules", config.name()).isEmpty();
        List<Route> routes = config.routes();
        assertThat(routes).as("%s: routes", config.name()).isNotEmpty();
        for (Route route : routes) {
            String path = route.getMatch().getPrefix();
            assertThat(path).as("%s: route %s matches by prefix", config.name(), route.getMatch()).isNotEmpty();
            RequirementRule rule = jwt.getRulesList().stream()
                    .filter(r -> r.getMatch().hasPrefix() && path.startsWith(r.getMatch().getPrefix()))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(config.name() + ": no jwt_authn rule covers " + path
                            + "; a request no rule matches is not verified"));
            JwtRequirement requires = rule.getRequires();
            assertThat(requires.getRequiresTypeCase())
                    .as("%s: the rule for %s must require the provider itself (requires_any with allow_missing, "
                            + "allow_missing_or_failed or no requirement let requests through unverified)",
                            config.name(), path)
                    .isEqualTo(JwtRequirement.RequiresTypeCase.PROVIDER_NAME);
            assertThat(requires.getProviderName()).as("%s: provider required for %s", config.name(), path)
                    .isEqualTo(provider);
            assertThat(route.getTypedPerFilterConfigMap()).as("%s: per-route filter config of %s", config.name(),
                    path).doesNotContainKey("envoy.filters.http.jwt_authn");
        }
        for (VirtualHost vhost : config.connectionManager().getRouteConfig().getVirtualHostsList()) {
            assertThat(vhost.getTypedPerFilterConfigMap()).as("%s: per-vhost filter config", config.name())
                    .doesNotContainKey("envoy.filters.http.jwt_authn");
        }
    }

    /**
     * The keys that sign the tokens come over TLS from a verified server: whoever could answer in its place could
     * sign a token for any group.
     */
    static void keysComeFromAVerifiedServer(StandaloneConfig config) {
        RemoteJwks jwks = groupProvider(config).getValue().getRemoteJwks();
        assertThat(jwks.getHttpUri().getUri()).as("%s: JWKS address", config.name()).startsWith("https://");
        Cluster cluster = config.cluster(jwks.getHttpUri().getCluster());
        assertThat(cluster.hasTransportSocket()).as("%s: cluster %s uses TLS", config.name(), cluster.getName())
                .isTrue();
        UpstreamTlsContext tls = EnvoyProtos.unpack(cluster.getTransportSocket().getTypedConfig(),
                UpstreamTlsContext.class);
        CertificateValidationContext validation = tls.getCommonTlsContext().getValidationContext();
        assertThat(validation.hasTrustedCa()).as("%s: cluster %s checks the server's certificate", config.name(),
                cluster.getName()).isTrue();
        assertThat(validation.getMatchTypedSubjectAltNamesList())
                .as("%s: cluster %s checks the server's name", config.name(), cluster.getName()).isNotEmpty();
        assertThat(tls.getSni()).as("%s: SNI", config.name()).isNotEmpty();
    }

    // The shipped file follows them.

    @Test
    void jwtAuthnRunsBeforeExtProcWhichRunsBeforeTheRouter() {
        StandaloneConfig config = shipped();
        jwtAuthnRunsBeforeExtProc(config);
        assertThat(config.filterIndex(StandaloneConfig.EXT_PROC_TYPE))
                .isLessThan(config.filterIndex(StandaloneConfig.ROUTER_TYPE));
    }

    @Test
    void aVerifiedClaimBecomesTheGroupHeader() {
        claimBecomesTheGroupHeader(shipped());
    }

    @Test
    void theTokenComesOnlyFromTheAuthorizationHeader() {
        tokenComesOnlyFromTheAuthorizationHeader(shipped());
    }

    @Test
    void everyRouteRequiresAValidToken() {
        everyRouteRequiresAValidToken(shipped());
    }

    @Test
    void theSigningKeysComeFromAVerifiedServer() {
        keysComeFromAVerifiedServer(shipped());
    }

    @Test
    void theTokenStaysAtTheIngress() {
        // forward: false removes the Authorization header once verified (authenticator.cc, handleGoodJwt): a shared
        // replica runs other teams' code, and neither Spark nor the router needs the caller's token.
        assertThat(groupProvider(shipped()).getValue().getForward()).isFalse();
    }

    @Test
    void clientsReachItOverTls() {
        // The Spark Connect clients send a token only over TLS (the Python client turns TLS on for it).
        assertThat(shipped().listener().getFilterChainsList()).isNotEmpty()
                .allSatisfy(chain -> assertThat(chain.hasTransportSocket()).as("TLS on every filter chain").isTrue());
    }

    @Test
    void theClientsGroupHeaderIsRemovedBeforeJwtAuthnRuns() {
        // Early header mutations run before the whole HTTP filter chain (conn_manager_utility.cc,
        // ConnectionManagerUtility::mutateRequestHeaders), so this removal precedes jwt_authn's own sanitising.
        DataPathRules.removesGroupHeader(FILE, shipped().earlyMutations());
    }

    // And each rule fails on a copy broken the way an edit could break it.

    @Test
    void extProcBeforeJwtAuthnFailsTheRules() {
        int jwt = SHIPPED.indexOf("          - name: envoy.filters.http.jwt_authn\n");
        int extProc = SHIPPED.indexOf("          - name: envoy.filters.http.ext_proc\n");
        int router = SHIPPED.indexOf("          - name: envoy.filters.http.router\n");
        assertThat(jwt).isPositive().isLessThan(extProc);
        assertThat(extProc).isLessThan(router);
        String swapped = SHIPPED.substring(0, jwt) + SHIPPED.substring(extProc, router)
                + SHIPPED.substring(jwt, extProc) + SHIPPED.substring(router);
        StandaloneConfig config = StandaloneConfig.parse(FILE + " (ext_proc first)", swapped);
        assertThatThrownBy(() -> jwtAuthnRunsBeforeExtProc(config)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("jwt_authn must run before ext_proc");
    }

    @Test
    void aClaimWrittenToAnotherHeaderFailsTheRules() {
        StandaloneConfig config = broken("- header_name: " + RouteHeaders.GROUP, "- header_name: x-scrouter-team");
        assertThatThrownBy(() -> claimBecomesTheGroupHeader(config)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("exactly one jwt_authn provider writes " + RouteHeaders.GROUP);
    }

    @Test
    void aMissingTokenAllowedFailsTheRules() {
        StandaloneConfig config = broken("requires: { provider_name: idp }",
                "requires: { requires_any: { requirements: [{ provider_name: idp }, { allow_missing: {} }] } }");
        assertThatThrownBy(() -> everyRouteRequiresAValidToken(config)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("must require the provider itself");
    }

    @Test
    void aRuleThatMissesTheSparkRouteFailsTheRules() {
        StandaloneConfig config = broken("- match: { prefix: / }", "- match: { prefix: /admin/ }");
        assertThatThrownBy(() -> everyRouteRequiresAValidToken(config)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("no jwt_authn rule covers");
    }

    @Test
    void tokensFromTheQueryStringFailTheRules() {
        StandaloneConfig config = broken("                  from_headers:\n", "                  from_params: "
                + "[access_token]\n                  from_headers:\n");
        assertThatThrownBy(() -> tokenComesOnlyFromTheAuthorizationHeader(config)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("from_params");
    }

    @Test
    void keysOverUncheckedTlsFailTheRules() {
        StandaloneConfig config = broken("            match_typed_subject_alt_names:\n"
                + "            - san_type: DNS\n              matcher: { exact: idp.example.com }\n", "");
        assertThatThrownBy(() -> keysComeFromAVerifiedServer(config)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("checks the server's name");
    }
}
