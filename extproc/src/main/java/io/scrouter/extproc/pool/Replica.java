package io.scrouter.extproc.pool;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One Spark Connect server in the pool.
 *
 * @param id          stable name, unique in the pool
 * @param grpcAddress literal {@code ip:port} of its Spark Connect gRPC endpoint (validated)
 * @param metricsUrl  base URL of its Spark UI / REST API, or null when it has none (never scored as fresh)
 * @param state       lifecycle state
 * @param instance    which driver serves under this id now (its Spark application id, as the publisher reads
 *                    it), or null when nothing publishes one; see {@link #identity()}
 * @param group       the replica group it serves (a team, a tier): {@link #DEFAULT_GROUP} unless published with
 *                    one; requests may use only the groups configured for theirs ({@code groups} in the config)
 */
public record Replica(String id, String grpcAddress, String metricsUrl, ReplicaState state, String instance,
                      String group) {

    /** The group of a replica published without one. */
    public static final String DEFAULT_GROUP = "default";

    /** A replica in the default group. */
    public Replica(String id, String grpcAddress, String metricsUrl, ReplicaState state, String instance) {
        this(id, grpcAddress, metricsUrl, state, instance, DEFAULT_GROUP);
    }

    /** Instance ids are printable ASCII without spaces or '@' (the separator in stored bindings). */
    private static final Pattern INSTANCE = Pattern.compile("[!-?A-~]{1,128}");

    /** A replica whose driver is known only by its address (static pools, controllers that publish no instance). */
    public Replica(String id, String grpcAddress, String metricsUrl, ReplicaState state) {
        this(id, grpcAddress, metricsUrl, state, null, DEFAULT_GROUP);
    }

    public Replica {
        if (!ReplicaAddress.isValidId(id)) {
            throw new IllegalArgumentException("replica id " + ReplicaAddress.ID_RULE + ", got '" + id + "'");
        }
        Optional<String> canonical = ReplicaAddress.parse(grpcAddress);
        if (canonical.isEmpty()) {
            throw new IllegalArgumentException("replica " + id + " grpc address " + ReplicaAddress.ADDRESS_RULE
                    + ", got '" + grpcAddress + "'");
        }
        grpcAddress = canonical.get();
        Objects.requireNonNull(state, "state");
        if (group == null) {
            group = DEFAULT_GROUP;
        }
        if (!ReplicaAddress.isValidId(group)) {
            throw new IllegalArgumentException("replica " + id + " group " + ReplicaAddress.ID_RULE + ", got '"
                    + group + "'");
        }
        if (instance != null && !INSTANCE.matcher(instance).matches()) {
            throw new IllegalArgumentException("replica " + id + " instance must be 1-128 printable characters "
                    + "without spaces or '@', got " + instance.length() + " characters");
        }
    }

    /**
     * The driver behind this id: its instance if published, else its address. Sessions are bound to it, and a
     * replica whose identity changes (re-registered at a new address, or its driver restarted in place) is a
     * different driver: the sessions of the old one are gone.
     */
    public String identity() {
        return instance != null ? instance : grpcAddress;
    }

    /** How sessions bound to this replica record it: {@code <id>@<identity>}. */
    public String boundAs() {
        return id + "@" + identity();
    }

    public boolean takesNewSessions() {
        return state == ReplicaState.READY;
    }
}
