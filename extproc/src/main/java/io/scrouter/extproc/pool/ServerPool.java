package io.scrouter.extproc.pool;

import java.util.Collection;
import java.util.HashSet;
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
    private final List<Consumer<PoolChange>> listeners = new CopyOnWriteArrayList<>();

    public PoolSnapshot snapshot() {
        return current;
    }

    public void onChange(Consumer<PoolChange> listener) {
        listeners.add(listener);
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
        current = after;
        for (Consumer<PoolChange> l : listeners) {
            l.accept(change);
        }
        return change;
    }
}
