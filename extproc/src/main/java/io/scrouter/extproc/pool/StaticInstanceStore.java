package io.scrouter.extproc.pool;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A fixed pool from the configuration file: the embedded default when no Redis is configured. */
public final class StaticInstanceStore implements InstanceStore {

    private final List<Replica> replicas;

    public StaticInstanceStore(List<Replica> replicas) {
        this.replicas = List.copyOf(replicas);
    }

    @Override
    public CompletableFuture<List<Replica>> list() {
        return CompletableFuture.completedFuture(replicas);
    }
}
