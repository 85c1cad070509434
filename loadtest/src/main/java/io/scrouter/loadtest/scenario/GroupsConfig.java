package io.scrouter.loadtest.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;

import java.util.Map;
import java.util.TreeMap;

/**
 * A scenario's {@code cluster.groups}: the router's own {@code groups} section, read by the router's own
 * {@link ConfigLoader}, so a scenario accepts exactly what a router configuration accepts and means the same by
 * it. Its errors name the scenario key ({@code cluster.groups.allow.team-a}), not the router's.
 */
final class GroupsConfig {

    private GroupsConfig() {
    }

    static RouterConfig.Groups read(String key, JsonNode section) {
        ObjectNode config = JsonNodeFactory.instance.objectNode();
        // The loader needs a pool beside the section; the simulator never reads it.
        config.putObject("pool").putArray("static").addObject().put("id", "unused").put("grpc", "127.0.0.1:15002");
        config.set("groups", section.deepCopy());
        try {
            return ConfigLoader.parse(config.toString(), Map.of()).groups().orElseThrow();
        } catch (ConfigException e) {
            String problem = e.getMessage().substring(("config key '" + e.key() + "' ").length());
            String scenarioKey = e.key().startsWith("groups") ? key + e.key().substring("groups".length()) : key;
            throw new ScenarioException(scenarioKey, problem);
        }
    }

    /**
     * The section as a router configuration would write it, groups sorted by name (the loader keeps no order
     * between request groups); {@link #read} reads it back to an equal value.
     */
    static ObjectNode toTree(RouterConfig.Groups groups) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        ObjectNode allow = n.putObject("allow");
        new TreeMap<>(groups.allow()).forEach((group, order) -> order.forEach(allow.putArray(group)::add));
        groups.withoutGroup().ifPresent(g -> n.put("withoutGroup", g));
        if (!groups.maxSessionsPerReplica().isEmpty()) {
            ObjectNode caps = n.putObject("maxSessionsPerReplica");
            new TreeMap<>(groups.maxSessionsPerReplica()).forEach(caps::put);
        }
        return n;
    }
}
