package io.scrouter.extproc.pool;

import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The replicas this router may route to. Readers take {@link #snapshot()} (one volatile read, no lock);
 * the single refresher replaces it whole and tells listeners what changed.
 *
 * <p>Guarantee: an address is written to a request only if it belongs to a replica of the snapshot in
 * force; entries were validated as literal {@code ip:port} on the way in ({@link Replica}).
 */
public final class ServerPool {

    private volatile PoolSnapshot current = PoolSnapshot.EMPTY;
    /**
     * Ids this router saw leave the pool and not come back, oldest first; bounded, as ids of a churning pool
     * never stop coming. Guarded by {@code this}.
     */
    private final LinkedHashSet<String> departed = new LinkedHashSet<>();
    private static final int DEPARTED_KEPT = 10_000;
    private final List<Consumer<PoolChange>> listeners = new CopyOnWriteArrayList<>();

    public PoolSnapshot snapshot() {
        return current;
    }

    public void onChange(Consumer<PoolChange> listener) {
        listeners.add(listener);
    }

    /**
     * True if this router saw {@code replicaId} leave the pool (and not return). A replica it never knew may have
     * left before it started, or may not be listed yet: an instance store that restarted empty lists each
     * replica again only at its publisher's next renewal.
     */
    public synchronized boolean sawLeave(String replicaId) {
        return departed.contains(replicaId);
    }

    /** Replaces the pool; returns (and announces) the difference. */
    public synchronized PoolChange replace(Collection<Replica> replicas) {
        PoolSnapshot before = current;
        PoolSnapshot after = new PoolSnapshot(replicas);
        Set<String> joined = new HashSet<>();
        Set<String> changed = new HashSet<>();
        for (Replica r : after.all()) {
            Replica old = before.get(r.id());
            if (old == null) {
                joined.add(r.id());
            } else if (!old.equals(r)) {
                changed.add(r.id());
            }
        }
        Set<String> left = new HashSet<>();
        for (Replica r : before.all()) {
            Replica now = after.get(r.id());
            if (now == null) {
                left.add(r.id());
            } else if (!now.identity().equals(r.identity())) {
                // Same id, another driver (a new address, or a new instance at the same address): sessions of
                // the old one are gone with it.
                left.add(r.id());
                joined.add(r.id());
                changed.remove(r.id());
            }
        }
        PoolChange change = new PoolChange(before, after, Set.copyOf(joined), Set.copyOf(left), Set.copyOf(changed));
        if (change.isEmpty()) {
            return change;
        }
        for (String id : left) {
            if (after.get(id) == null) {
                departed.add(id);
            }
        }
        departed.removeAll(joined);
        while (departed.size() > DEPARTED_KEPT) {
            departed.remove(departed.iterator().next());
        }
        current = after;
        for (Consumer<PoolChange> l : listeners) {
            l.accept(change);
        }
        return change;
    }
}
