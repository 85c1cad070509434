package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.scrouter.extproc.envoy.RouteHeaders;
import org.junit.jupiter.api.Test;

/**
 * The config tests are only worth something if they fail on a broken config: each case here breaks a
 * copy of the shipped bootstrap the way a careless edit would and expects the check to notice.
 */
class ConfigMistakesAreCaughtTest {

    private static final String SHIPPED = RepoFiles.read(RepoFiles.root().resolve("envoy/envoy.yaml"));

    private static String broken(String from, String to) {
        assertThat(SHIPPED).as("the mistake must apply to the shipped config").contains(from);
        return SHIPPED.replace(from, to);
    }

    @Test
    void theShippedConfigItselfPasses() {
        StandaloneConfig config = StandaloneConfig.parse("envoy.yaml", SHIPPED);
        DataPathRules.replicaCluster(config.name(), config.replicaCluster(), UpstreamCarrier.HEADER);
        DataPathRules.extProcFilter(config.name(), config.extProc(), UpstreamCarrier.HEADER);
    }

    @Test
    void aMisspeltFieldFailsParsing() {
        String yaml = broken("failure_mode_allow: false", "failure_mode_alow: false");
        assertThatThrownBy(() -> StandaloneConfig.parse("misspelt", yaml))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("failure_mode_alow");
    }

    @Test
    void aWrongValueTypeFailsParsing() {
        String yaml = broken("message_timeout: 0.2s", "message_timeout: soon");
        assertThatThrownBy(() -> StandaloneConfig.parse("bad duration", yaml))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anUnknownTypedConfigFailsParsing() {
        String yaml = broken("ext_proc.v3.ExternalProcessor", "ext_proc.v3.ExternalProcesor");
        assertThatThrownBy(() -> StandaloneConfig.parse("unknown type", yaml))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aDifferentRouteHeaderOnTheClusterFailsTheRules() {
        String yaml = broken("http_header_name: " + RouteHeaders.UPSTREAM, "http_header_name: x-scrouter-upstrem");
        StandaloneConfig config = StandaloneConfig.parse("wrong cluster header", yaml);
        assertThatThrownBy(() ->
                DataPathRules.replicaCluster(config.name(), config.replicaCluster(), UpstreamCarrier.HEADER))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("http_header_name");
    }

    @Test
    void removingADifferentHeaderFailsTheRules() {
        String yaml = broken("- remove: " + RouteHeaders.UPSTREAM, "- remove: x-envoy-original-dst-host");
        StandaloneConfig config = StandaloneConfig.parse("wrong removal", yaml);
        assertThatThrownBy(() -> DataPathRules.removesUpstreamHeader(config.name(),
                config.connectionManager().getEarlyHeaderMutationExtensionsList().stream()
                        .map(e -> EnvoyProtos.unpack(e.getTypedConfig(),
                                io.envoyproxy.envoy.extensions.http.early_header_mutation.header_mutation.v3
                                        .HeaderMutation.class))
                        .flatMap(m -> m.getMutationsList().stream())
                        .toList()))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void droppingTheGroupRemovalFailsTheRules() {
        String yaml = broken("- remove: " + RouteHeaders.GROUP + "\n", "\n");
        StandaloneConfig config = StandaloneConfig.parse("group removal dropped", yaml);
        DataPathRules.removesUpstreamHeader(config.name(), config.earlyMutations());
        assertThatThrownBy(() -> DataPathRules.removesGroupHeader(config.name(), config.earlyMutations()))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(RouteHeaders.GROUP);
    }

    @Test
    void aTypoInTheAccessLogHeaderFailsTheRules() {
        String yaml = broken("%REQ(X-SPARK-SESSION-ID)%", "%REQ(X-SPARK-SESION-ID)%");
        StandaloneConfig config = StandaloneConfig.parse("access log typo", yaml);
        assertThatThrownBy(() -> DataPathRules.mentionsOnlyKnownHeaders(config.name(), config.tree()))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("x-spark-sesion-id");
    }

    @Test
    void failingOpenFailsTheRules() {
        String yaml = broken("failure_mode_allow: false", "failure_mode_allow: true");
        StandaloneConfig config = StandaloneConfig.parse("fail open", yaml);
        assertThatThrownBy(() -> DataPathRules.extProcFilter(config.name(), config.extProc(), UpstreamCarrier.HEADER))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("failure_mode_allow");
    }

    @Test
    void anUnsetRouteTimeoutFailsTheRules() {
        String yaml = broken("timeout: 0s\n", "\n");
        StandaloneConfig config = StandaloneConfig.parse("default route timeout", yaml);
        assertThatThrownBy(() -> DataPathRules.replicaRoute(config.name(), config.routes().get(0).getRoute(),
                config.replicaCluster().getName()))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    void aBodyOverrideOtherThanTheServicesFailsTheRules() {
        // BUFFERED would make Envoy fail large AddArtifacts uploads; the service never asks for it anyway.
        String yaml = broken("request_body_mode: BUFFERED_PARTIAL", "request_body_mode: BUFFERED");
        StandaloneConfig config = StandaloneConfig.parse("buffered override", yaml);
        assertThatThrownBy(() -> DataPathRules.extProcFilter(config.name(), config.extProc(), UpstreamCarrier.HEADER))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("allowed_override_modes");
    }
}
