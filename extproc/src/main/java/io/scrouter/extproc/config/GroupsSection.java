package io.scrouter.extproc.config;

import io.scrouter.extproc.pool.ReplicaAddress;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the {@code groups} section:
 *
 * <pre>
 * groups:
 *   allow:                      # request group -> replica groups, in fallback order
 *     team-a: [team-a, shared]
 *     team-b: [team-b, shared]
 *   withoutGroup: shared        # optional: requests without the group header count as this group
 *   maxSessionsPerReplica:      # optional, per replica group
 *     team-a: 20
 * </pre>
 */
final class GroupsSection {

    private GroupsSection() {
    }

    static RouterConfig.Groups read(Section g) {
        Section a = g.section("allow");
        Map<String, List<String>> allow = new LinkedHashMap<>();
        Set<String> replicaGroups = new HashSet<>();
        for (String requestGroup : a.names()) {
            checkName(a.key(requestGroup), requestGroup);
            List<String> order = a.stringList(requestGroup);
            if (order.isEmpty()) {
                throw new ConfigException(a.key(requestGroup), "lists no replica group; list the groups its sessions "
                        + "may use, in fallback order, such as [" + requestGroup + ", shared]");
            }
            if (new HashSet<>(order).size() != order.size()) {
                throw new ConfigException(a.key(requestGroup), "lists a replica group twice: " + order);
            }
            for (String replicaGroup : order) {
                checkName(a.key(requestGroup), replicaGroup);
            }
            replicaGroups.addAll(order);
            allow.put(requestGroup, List.copyOf(order));
        }
        if (allow.isEmpty()) {
            throw new ConfigException(g.key("allow"), "is required in a groups section: map each request group to "
                    + "the replica groups it may use, such as team-a: [team-a, shared]; remove the section to "
                    + "turn groups off");
        }
        Optional<String> withoutGroup = Optional.ofNullable(g.string("withoutGroup", null));
        if (withoutGroup.isPresent() && !allow.containsKey(withoutGroup.get())) {
            throw new ConfigException(g.key("withoutGroup"), "names '" + withoutGroup.get() + "', which is not a "
                    + "request group under groups.allow " + allow.keySet());
        }
        Section c = g.section("maxSessionsPerReplica");
        Map<String, Long> caps = new LinkedHashMap<>();
        for (String replicaGroup : c.names()) {
            if (!replicaGroups.contains(replicaGroup)) {
                throw new ConfigException(c.key(replicaGroup), "caps replica group '" + replicaGroup + "', which no "
                        + "request group may use (groups.allow lists " + new ArrayList<>(replicaGroups) + ")");
            }
            caps.put(replicaGroup, c.longValue(replicaGroup, 1, 1, 1_000_000));
        }
        g.rejectUnknownKeys();
        return new RouterConfig.Groups(Map.copyOf(allow), withoutGroup, Map.copyOf(caps));
    }

    private static void checkName(String key, String name) {
        if (!ReplicaAddress.isValidId(name)) {
            throw new ConfigException(key, "group names " + ReplicaAddress.ID_RULE + ", got '" + name + "'");
        }
    }
}
