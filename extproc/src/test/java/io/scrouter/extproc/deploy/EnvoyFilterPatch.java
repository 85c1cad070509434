package io.scrouter.extproc.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.ArrayList;
import java.util.List;

/** One {@code configPatches} entry of an Istio EnvoyFilter, its value parsed into the Envoy proto it patches. */
record EnvoyFilterPatch(Manifest filter, int index, String applyTo, JsonNode match, String operation,
                        Message value) {

    static List<EnvoyFilterPatch> of(Manifest envoyFilter) {
        List<EnvoyFilterPatch> patches = new ArrayList<>();
        JsonNode list = envoyFilter.spec().path("configPatches");
        for (int i = 0; i < list.size(); i++) {
            JsonNode patch = list.get(i);
            String applyTo = patch.path("applyTo").asText();
            String where = envoyFilter.where() + " configPatches[" + i + "] " + applyTo;
            JsonNode value = patch.path("patch").path("value");
            Message parsed = value.isMissingNode() ? null : parse(where, applyTo, value);
            patches.add(new EnvoyFilterPatch(envoyFilter, i, applyTo, patch.path("match"),
                    patch.path("patch").path("operation").asText(), parsed));
        }
        return patches;
    }

    static List<EnvoyFilterPatch> all() {
        return Manifest.ofKind("EnvoyFilter").stream().flatMap(f -> of(f).stream()).toList();
    }

    /** Istio hands the value to Envoy as the proto its applyTo names; parse it exactly that way. */
    private static Message parse(String where, String applyTo, JsonNode value) {
        Message.Builder builder = switch (applyTo) {
            case "HTTP_FILTER" -> HttpFilter.newBuilder();
            case "NETWORK_FILTER" -> Filter.newBuilder();
            case "CLUSTER" -> Cluster.newBuilder();
            case "HTTP_ROUTE" -> Route.newBuilder();
            case "VIRTUAL_HOST" -> VirtualHost.newBuilder();
            case "ROUTE_CONFIGURATION" -> RouteConfiguration.newBuilder();
            case "LISTENER" -> Listener.newBuilder();
            default -> throw new AssertionError(where + ": no proto mapping for applyTo " + applyTo);
        };
        try {
            return EnvoyProtos.parse(value, builder);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(where + ": value is not a valid Envoy 1.34 "
                    + builder.getDescriptorForType().getName() + ": " + e.getMessage(), e);
        }
    }

    String where() {
        return filter.where() + " configPatches[" + index + "] " + applyTo;
    }

    String context() {
        return match.path("context").asText();
    }

    int listenerPort() {
        return match.path("listener").path("portNumber").asInt(-1);
    }

    String subFilter() {
        return match.path("listener").path("filterChain").path("filter").path("subFilter").path("name").asText(null);
    }

    <T extends Message> T valueAs(Class<T> type) {
        if (!type.isInstance(value)) {
            throw new AssertionError(where() + ": value is not a " + type.getSimpleName());
        }
        return type.cast(value);
    }
}
