package io.scrouter.extproc.pool;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable view of the pool at one moment. Readers on the request path take the current snapshot
 * once and use it for the whole decision, so a concurrent pool change cannot split one decision.
 */
public final class PoolSnapshot {

    public static final PoolSnapshot EMPTY = new PoolSnapshot(List.of());

    private final Map<String, Replica> byId;
    private final List<Replica> takingNewSessions;

    public PoolSnapshot(Collection<Replica> replicas) {
        Map<String, Replica> map = new LinkedHashMap<>();
        List<Replica> ready = new ArrayList<>();
        for (Replica r : replicas) {
            if (map.putIfAbsent(r.id(), r) != null) {
                throw new IllegalArgumentException("replica id '" + r.id() + "' appears twice in the pool");
            }
            if (r.takesNewSessions()) {
                ready.add(r);
            }
        }
        this.byId = Collections.unmodifiableMap(map);
        this.takingNewSessions = List.copyOf(ready);
    }

    public Replica get(String id) {
        return byId.get(id);
    }

    public Collection<Replica> all() {
        return byId.values();
    }

    public List<Replica> ready() {
        return takingNewSessions;
    }

    public int size() {
        return byId.size();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PoolSnapshot other && byId.equals(other.byId);
    }

    @Override
    public int hashCode() {
        return byId.hashCode();
    }

    @Override
    public String toString() {
        return "PoolSnapshot" + byId.values();
    }
}
