package io.scrouter.loadtest.replay;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Publishes the simulated replicas into the service's Redis instance store, as replica publishers do, and
 * renews them while the replay runs; on close it removes them, so the service's pool does not keep pointing
 * at replicas that no longer answer. Entries expire by themselves if this process dies.
 */
final class RedisPublication implements AutoCloseable {

    private static final Duration TTL = Duration.ofSeconds(15);
    private static final long RENEW_EVERY_SECONDS = 5;

    private final RedissonClient client;
    private final RedisInstanceStore store;
    private final SimulatedReplicas replicas;
    private final ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "replica-renewal");
        t.setDaemon(true);
        return t;
    });

    RedisPublication(String redisAddress, String keyPrefix, SimulatedReplicas replicas) throws Exception {
        Config config = new Config();
        config.useSingleServer().setAddress(redisAddress).setTimeout(2_000).setConnectTimeout(2_000);
        this.client = Redisson.create(config);
        this.store = new RedisInstanceStore(client, new RedisKeys(keyPrefix));
        this.replicas = replicas;
        publishAll().get(5, TimeUnit.SECONDS);
        renewer.scheduleAtFixedRate(this::publishAll, RENEW_EVERY_SECONDS, RENEW_EVERY_SECONDS, TimeUnit.SECONDS);
    }

    private CompletableFuture<Void> publishAll() {
        return CompletableFuture.allOf(replicas.all().stream()
                .map(r -> store.publish(new Replica(r.id(), r.grpcAddress(), r.metricsUrl(), ReplicaState.READY), TTL))
                .toArray(CompletableFuture[]::new));
    }

    @Override
    public void close() throws Exception {
        renewer.shutdownNow();
        try {
            CompletableFuture.allOf(replicas.all().stream().map(r -> store.remove(r.id()))
                    .toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
        } finally {
            client.shutdown();
        }
    }
}
