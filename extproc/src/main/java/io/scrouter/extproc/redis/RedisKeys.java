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
 *   <li>{@code <p>:epoch} string: a random marker set once; when it changes, Redis lost its data and routers
 *       write their live sessions back.</li>
 *   <li>{@code <p>:bindings} stream (capped at about 200,000 entries): {@code <sessionId> <replicaId>} for every
 *       new binding; every router reads it from its last position, so it learns live sessions before it needs
 *       them (and can keep routing them if Redis goes away), including those announced while it was cut off.
 *       {@code <p>:bindings:batches} is a pub/sub channel carrying the same entries at once, one message per batch
 *       with their stream ids, so that a router that heard a batch need not read it from the stream again.</li>
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

    /** A random marker written once per data set: a changed value means Redis lost its data. */
    public String epoch() {
        return prefix + ":epoch";
    }

    public String bindingFeed() {
        return prefix + ":bindings";
    }

    /**
     * The pub/sub channel on which each batch of new bindings is announced at once, with the stream entries it
     * added (the stream covers what the channel misses). Named apart from {@code <p>:bindings:live}, where earlier
     * versions of the router published one binding per message, without stream ids.
     */
    public String bindingChannel() {
        return prefix + ":bindings:batches";
    }
}
