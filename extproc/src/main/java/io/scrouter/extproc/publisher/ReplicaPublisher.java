package io.scrouter.extproc.publisher;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Registers one Spark Connect replica in the instance store and keeps it alive, so that the system works
 * without a custom controller. Runs as a sidecar beside each Spark Connect server.
 *
 * <p>Lifecycle: {@code warming} until the server answers on gRPC and REST, then {@code ready};
 * {@code draining} once {@link #drain()} is called (SIGTERM); and gone by expiry when renewals stop, which
 * is also what happens if the pod dies. A ready replica that fails {@link #FAILURES_TO_UNREADY} checks in a
 * row goes back to warming, so it stops receiving new sessions while its existing ones keep their routes.
 * Each {@link #tick()} is one check and one renewal; the caller schedules ticks.
 */
public final class ReplicaPublisher {

    static final int FAILURES_TO_UNREADY = 3;
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaPublisher.class);

    private final RedisInstanceStore store;
    private final String id;
    private final String grpcAddress;
    private final String metricsUrl;
    private final String group;
    private final Duration ttl;
    private final ReadinessCheck readiness;
    private volatile ReplicaState state = ReplicaState.WARMING;
    private volatile boolean draining;
    private int failuresInARow;

    public ReplicaPublisher(RedisInstanceStore store, String id, String grpcAddress, String metricsUrl, Duration ttl,
                            ReadinessCheck readiness) {
        this(store, id, grpcAddress, metricsUrl, Replica.DEFAULT_GROUP, ttl, readiness);
    }

    /** @param group the replica group it is published in ({@code --group}) */
    public ReplicaPublisher(RedisInstanceStore store, String id, String grpcAddress, String metricsUrl, String group,
                            Duration ttl, ReadinessCheck readiness) {
        // Validates id, address and group the same way the router will.
        new Replica(id, grpcAddress, metricsUrl, ReplicaState.WARMING, null, group);
        this.group = group;
        this.store = store;
        this.id = id;
        this.grpcAddress = grpcAddress;
        this.metricsUrl = metricsUrl;
        this.ttl = ttl;
        this.readiness = readiness;
    }

    public ReplicaState state() {
        return state;
    }

    /** From now on the replica is published as draining: it keeps its sessions and gets no new ones. */
    public void drain() {
        draining = true;
        state = ReplicaState.DRAINING;
        LOG.atInfo().setMessage("draining: no new sessions; existing sessions keep their replica")
                .addKeyValue("replica", id).log();
    }

    /** Checks readiness (unless draining) and renews the entry. Completes with the state published. */
    public synchronized CompletableFuture<ReplicaState> tick() {
        CompletableFuture<String> check = draining ? CompletableFuture.completedFuture(null)
                : readiness.notReadyReason();
        return check.thenCompose(problem -> {
            ReplicaState next = nextState(problem);
            Replica entry = new Replica(id, grpcAddress, metricsUrl, next, readiness.instance(), group);
            return store.publish(entry, ttl).thenApply(x -> next);
        });
    }

    private synchronized ReplicaState nextState(String problem) {
        ReplicaState before = state;
        if (draining) {
            state = ReplicaState.DRAINING;
        } else if (problem == null) {
            failuresInARow = 0;
            state = ReplicaState.READY;
        } else if (++failuresInARow >= FAILURES_TO_UNREADY || state == ReplicaState.WARMING) {
            state = ReplicaState.WARMING;
        }
        if (state != before) {
            var event = LOG.atInfo().setMessage("published state changed").addKeyValue("replica", id)
                    .addKeyValue("from", before.wireName()).addKeyValue("to", state.wireName());
            if (problem != null) {
                event = event.addKeyValue("reason", problem);
            }
            event.log();
        }
        return state;
    }
}
