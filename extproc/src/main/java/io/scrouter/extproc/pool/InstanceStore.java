package io.scrouter.extproc.pool;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where the pool's members are published. The Redis implementation is shared by all routers and fed by a
 * controller or the replica publisher; the static one serves the embedded default.
 */
public interface InstanceStore {

    /** The replicas published now (expired ones excluded). Completes exceptionally if the store is down. */
    CompletableFuture<List<Replica>> list();
}
