package io.scrouter.extproc.routing;

import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaAddress;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Which replicas a request may use, by its group: the {@code groups} section of the configuration applied to the
 * group header Envoy sets from the caller's authenticated identity ({@link GroupRejections} says what each refusal
 * tells the user). Without a {@code groups} section every request may use every replica, and nothing is capped.
 */
public final class ReplicaGroups {

    /**
     * The request header that carries the caller's group. Envoy sets it from an authenticated identity (a JWT
     * claim) after removing any copy the client sent; the router never trusts a client for it.
     */
    public static final String HEADER = "x-scrouter-group";

    /** Every request may use every replica (no {@code groups} section). */
    public static final ReplicaGroups NONE = new ReplicaGroups(null);

    private final RouterConfig.Groups config;
    /** Refusals because every allowed replica was full, by request group (a configured name, so few keys). */
    private final Map<String, LongAdder> fullRefusals = new ConcurrentHashMap<>();

    private ReplicaGroups(RouterConfig.Groups config) {
        this.config = config;
    }

    public static ReplicaGroups from(Optional<RouterConfig.Groups> config) {
        return config.map(ReplicaGroups::new).orElse(NONE);
    }

    /**
     * What one request may use.
     *
     * @param requestGroup the request's group as resolved (null without groups)
     * @param order        the replica groups its new sessions may go to, in fallback order; null for all replicas
     */
    public record Access(String requestGroup, List<String> order) {

        static final Access EVERYTHING = new Access(null, null);

        /** True if a session on {@code replica} may be used by this request. */
        boolean allows(Replica replica) {
            return order == null || order.contains(replica.group());
        }
    }

    /** Where a request's access comes from: an access, or the reason it has none. */
    sealed interface Resolution permits Granted, Refused {
    }

    record Granted(Access access) implements Resolution {
    }

    record Refused(Decision.Reject reject) implements Resolution {
    }

    /**
     * The access of a request whose group header was {@code group} ({@code count} times; null when absent).
     * A missing header counts as {@code groups.withoutGroup} when configured; otherwise the request is refused,
     * as is a group the configuration does not know and a header sent more than once.
     */
    Resolution resolve(String group, int count) {
        if (config == null) {
            return new Granted(Access.EVERYTHING);
        }
        if (count > 1) {
            return new Refused(GroupRejections.repeated(count));
        }
        String requestGroup = group != null ? group : config.withoutGroup().orElse(null);
        if (requestGroup == null) {
            return new Refused(GroupRejections.missing());
        }
        List<String> order = ReplicaAddress.isValidId(requestGroup) ? config.allow().get(requestGroup) : null;
        if (order == null) {
            return new Refused(GroupRejections.unknown(requestGroup));
        }
        return new Granted(new Access(requestGroup, order));
    }

    /**
     * Offers a new session's replicas to {@code placeAmong} one allowed replica group at a time, in the access's
     * fallback order, and returns its first answer that is not null. Each group's offer is its ready replicas
     * below the group's cap ({@code sessionsOn} of the replica), or all of them when {@code ignoreCaps}; a group
     * with nothing to offer is skipped. Without groups ({@code access.order()} null) all of {@code ready} is offered
     * at once. The router's placement and the simulator's both go through here, so they apply groups alike.
     *
     * @param ready      replicas that take new sessions, in pool order
     * @param placeAmong picks among a non-empty offer; null when it takes none of them
     * @return the first placement made, or null when no allowed group took the session
     */
    public <P> P placeInOrder(Access access, List<Replica> ready, ToLongFunction<Replica> sessionsOn,
                              boolean ignoreCaps, Function<List<Replica>, P> placeAmong) {
        if (access.order() == null) {
            return ready.isEmpty() ? null : placeAmong.apply(ready);
        }
        for (String group : access.order()) {
            List<Replica> open = new ArrayList<>();
            long cap = capOf(group);
            for (Replica r : ready) {
                if (r.group().equals(group) && (ignoreCaps || sessionsOn.applyAsLong(r) < cap)) {
                    open.add(r);
                }
            }
            P placed = open.isEmpty() ? null : placeAmong.apply(open);
            if (placed != null) {
                return placed;
            }
        }
        return null;
    }

    /** The most live sessions one replica of {@code replicaGroup} takes; {@link Long#MAX_VALUE} when uncapped. */
    long capOf(String replicaGroup) {
        if (config == null) {
            return Long.MAX_VALUE;
        }
        return config.maxSessionsPerReplica().getOrDefault(replicaGroup, Long.MAX_VALUE);
    }

    /** A new session of {@code requestGroup} found every replica it may use at its cap. */
    void noteFull(String requestGroup) {
        fullRefusals.computeIfAbsent(requestGroup, g -> new LongAdder()).increment();
    }

    /** How many new sessions each request group had refused for want of room, since the router started. */
    public Map<String, Long> fullRefusals() {
        Map<String, Long> out = new TreeMap<>();
        fullRefusals.forEach((group, count) -> out.put(group, count.sum()));
        return out;
    }

    /** True when groups are configured. */
    public boolean enabled() {
        return config != null;
    }

    /** The configured caps by replica group (empty without groups), for the admin view. */
    public Map<String, Long> caps() {
        return config == null ? Map.of() : config.maxSessionsPerReplica();
    }
}
