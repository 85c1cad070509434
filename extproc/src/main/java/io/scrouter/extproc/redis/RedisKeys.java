package io.scrouter.extproc.redis;

/**
 * The Redis schema, in one place. See "Redis schema" in README.md.
 *
 * <ul>
 *   <li>{@code <p>:session:<sessionId>} string: the replica id, or {@code !lost:<replicaId>}; expires after
 *       the idle TTL (lost-TTL for tombstones).</li>
 *   <li>{@code <p>:replica-sessions:<replicaId>} sorted set: session id → expiry (epoch ms); counting members
 *       with a future score gives the replica's live sessions without keyspace notifications.</li>
 *   <li>{@code <p>:replica:<replicaId>} string: JSON of the replica (id, grpc, metricsUrl, state); expires
 *       unless its publisher renews it.</li>
 *   <li>{@code <p>:replicas} set: ids of published replicas (an index, since Redis cannot list expired keys).</li>
 *   <li>{@code <p>:bindings} pub/sub channel: {@code <sessionId> <replicaId>} for every new binding, so every
 *       router learns live sessions before it needs them (and can keep routing them if Redis goes away).</li>
 * </ul>
 * Every command touches one key, so the schema works unchanged on Redis Cluster.
 */
public record RedisKeys(String prefix) {

    public String session(String sessionId) {
        return prefix + ":session:" + sessionId;
    }

    public String replicaSessions(String replicaId) {
        return prefix + ":replica-sessions:" + replicaId;
    }

    public String replica(String replicaId) {
        return prefix + ":replica:" + replicaId;
    }

    public String replicaIndex() {
        return prefix + ":replicas";
    }

    public String bindingFeed() {
        return prefix + ":bindings";
    }
}
