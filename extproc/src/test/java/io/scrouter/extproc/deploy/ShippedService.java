package io.scrouter.extproc.deploy;

import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;

import java.util.Map;

/** The service configuration the repository ships, as the service itself reads it. */
final class ShippedService {

    private ShippedService() {
    }

    /** The Istio install's config: the ConfigMap's file, with the Secret's Redis address supplied. */
    static RouterConfig istio() {
        String file = Manifest.only("ConfigMap").doc().path("data").path("scrouter.yaml").asText();
        return ConfigLoader.parse(file, Map.of("SCROUTER_REDIS_ADDRESS", "redis://127.0.0.1:6379"));
    }

    /** What a router accepts unless configured otherwise: the standalone Envoy configs are checked against it. */
    static RouterConfig defaults() {
        return ConfigLoader.parse("redis: {address: \"redis://127.0.0.1:6379\"}\n", Map.of());
    }

    /** The smaller of the two bounds: every shipped Envoy config must fit both. */
    static int maxBufferedBodyBytes() {
        return Math.min(istio().server().maxBufferedBodyBytes(), defaults().server().maxBufferedBodyBytes());
    }
}
