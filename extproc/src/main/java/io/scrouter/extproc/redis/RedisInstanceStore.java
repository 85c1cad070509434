package io.scrouter.extproc.redis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.scrouter.extproc.pool.InstanceStore;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import org.redisson.api.RSet;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The pool as published in Redis by a controller or by replica publishers: one key per replica holding its
 * JSON and expiring unless renewed, plus an index set of ids (see {@link RedisKeys}).
 *
 * <p>Entries that fail validation (a hostname instead of a literal ip, an unknown state) are skipped and
 * logged once, never routed to: the pool is the only source of addresses the router writes.
 */
public final class RedisInstanceStore implements InstanceStore {

    private static final Logger LOG = LoggerFactory.getLogger(RedisInstanceStore.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final Set<String> reportedInvalid = ConcurrentHashMap.newKeySet();

    public RedisInstanceStore(RedissonClient redis, RedisKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    private RSet<String> index() {
        return redis.getSet(keys.replicaIndex(), StringCodec.INSTANCE);
    }

    @Override
    public CompletableFuture<List<Replica>> list() {
        return index().readAllAsync().toCompletableFuture().thenCompose(ids -> {
            if (ids.isEmpty()) {
                return CompletableFuture.completedFuture(List.<Replica>of());
            }
            String[] names = ids.stream().map(keys::replica).toArray(String[]::new);
            return redis.getBuckets(StringCodec.INSTANCE).<String>getAsync(names).toCompletableFuture()
                    .thenApply(found -> collect(ids, found));
        });
    }

    private List<Replica> collect(Set<String> ids, Map<String, String> found) {
        List<Replica> replicas = new ArrayList<>();
        List<String> expired = new ArrayList<>();
        for (String id : ids) {
            String json = found.get(keys.replica(id));
            if (json == null) {
                expired.add(id);
                continue;
            }
            parse(id, json).ifPresent(replicas::add);
        }
        if (!expired.isEmpty()) {
            // Any router may prune the index; SREM is idempotent.
            index().removeAllAsync(expired);
        }
        return replicas;
    }

    private Optional<Replica> parse(String id, String json) {
        try {
            JsonNode n = JSON.readTree(json);
            ReplicaState state = ReplicaState.parse(n.path("state").asText(null)).orElseThrow(
                    () -> new IllegalArgumentException("state must be ready, warming or draining"));
            String metrics = n.hasNonNull("metricsUrl") ? n.get("metricsUrl").asText() : null;
            String instance = n.hasNonNull("instance") ? n.get("instance").asText() : null;
            String group = n.hasNonNull("group") ? n.get("group").asText() : Replica.DEFAULT_GROUP;
            Replica r = new Replica(id, n.path("grpc").asText(null), metrics, state, instance, group);
            reportedInvalid.remove(id);
            return Optional.of(r);
        } catch (IOException | IllegalArgumentException e) {
            if (reportedInvalid.add(id)) {
                LOG.atWarn().setMessage("ignoring a replica in the instance store. Fix what publishes it; it gets "
                        + "no traffic until then").addKeyValue("replica", id).addKeyValue("problem", e.getMessage())
                        .log();
            }
            return Optional.empty();
        }
    }

    /** Publishes (or renews) a replica; it vanishes {@code ttl} after the last call. */
    public CompletableFuture<Void> publish(Replica replica, Duration ttl) {
        ObjectNode n = JSON.createObjectNode();
        n.put("id", replica.id());
        n.put("grpc", replica.grpcAddress());
        if (replica.metricsUrl() != null) {
            n.put("metricsUrl", replica.metricsUrl());
        }
        n.put("state", replica.state().wireName());
        if (replica.instance() != null) {
            n.put("instance", replica.instance());
        }
        n.put("group", replica.group());
        return redis.getBucket(keys.replica(replica.id()), StringCodec.INSTANCE)
                .setAsync(n.toString(), ttl).toCompletableFuture()
                .thenCompose(x -> index().addAsync(replica.id()).toCompletableFuture())
                .thenApply(x -> null);
    }

    /** Removes a replica at once (a controller scaling in, or a test). */
    public CompletableFuture<Void> remove(String replicaId) {
        return redis.getBucket(keys.replica(replicaId), StringCodec.INSTANCE).deleteAsync().toCompletableFuture()
                .thenCompose(x -> index().removeAsync(replicaId).toCompletableFuture())
                .thenApply(x -> null);
    }
}
