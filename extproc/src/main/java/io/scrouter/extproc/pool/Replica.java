package io.scrouter.extproc.pool;

import java.util.Objects;

/**
 * One Spark Connect server in the pool.
 *
 * @param id          stable name, unique in the pool
 * @param grpcAddress literal {@code ip:port} of its Spark Connect gRPC endpoint (validated)
 * @param metricsUrl  base URL of its Spark UI / REST API, or null when it has none (never scored as fresh)
 * @param state       lifecycle state
 */
public record Replica(String id, String grpcAddress, String metricsUrl, ReplicaState state) {

    public Replica {
        if (!ReplicaAddress.isValidId(id)) {
            throw new IllegalArgumentException("replica id " + ReplicaAddress.ID_RULE + ", got '" + id + "'");
        }
        java.util.Optional<String> canonical = ReplicaAddress.parse(grpcAddress);
        if (canonical.isEmpty()) {
            throw new IllegalArgumentException("replica " + id + " grpc address " + ReplicaAddress.ADDRESS_RULE
                    + ", got '" + grpcAddress + "'");
        }
        grpcAddress = canonical.get();
        Objects.requireNonNull(state, "state");
    }

    public boolean takesNewSessions() {
        return state == ReplicaState.READY;
    }
}
