package io.scrouter.loadtest.replay;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The {@link LiveReplica}s of a {@link ReplicaLayout}, running. Nothing listens on their gRPC addresses: the
 * service only writes those into a header, and this replay reads them back to know where a session went. A
 * ticker moves their queues along so the REST endpoints report current load between submissions.
 */
public final class SimulatedReplicas implements AutoCloseable {

    private final Map<String, LiveReplica> byAddress = new LinkedHashMap<>();
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "replica-ticker");
        t.setDaemon(true);
        return t;
    });

    public SimulatedReplicas(ReplicaLayout layout, int slots) throws IOException {
        this(layout, Collections.nCopies(layout.count(), slots));
    }

    /** Replica {@code i} of {@code layout} with {@code slots.get(i)} task slots, as a scenario's cluster lists them. */
    public SimulatedReplicas(ReplicaLayout layout, List<Integer> slots) throws IOException {
        if (slots.size() != layout.count()) {
            throw new IllegalArgumentException(layout.count() + " replicas but task slots for " + slots.size());
        }
        try {
            for (int i = 0; i < layout.count(); i++) {
                byAddress.put(layout.grpcAddress(i),
                        new LiveReplica(layout.id(i), layout.grpcAddress(i), slots.get(i), layout.metricsPort(i)));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
        ticker.scheduleAtFixedRate(() -> {
            long now = System.nanoTime();
            byAddress.values().forEach(r -> r.advance(now));
        }, 20, 20, TimeUnit.MILLISECONDS);
    }

    public Collection<LiveReplica> all() {
        return byAddress.values();
    }

    /** The replica the service routed to, or null when the address is not one of ours. */
    public LiveReplica at(String grpcAddress) {
        return grpcAddress == null ? null : byAddress.get(grpcAddress);
    }

    public List<String> ids() {
        return all().stream().map(LiveReplica::id).toList();
    }

    /** The {@code pool} section of a service configuration naming exactly these replicas, all ready. */
    public String staticPoolYaml() {
        return ReplicaLayout.staticPoolYaml(all().stream()
                .map(r -> new ReplicaLayout.PoolEntry(r.id(), r.grpcAddress(), r.metricsUrl())).toList());
    }

    /** Waits, bounded, until a router has probed every replica {@code times} times; false on timeout. */
    public boolean awaitProbed(int times, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            if (all().stream().allMatch(r -> r.probes() >= times)) {
                return true;
            }
            Thread.sleep(50);
        }
        return false;
    }

    @Override
    public void close() {
        ticker.shutdownNow();
        List<LiveReplica> open = new ArrayList<>(byAddress.values());
        open.forEach(LiveReplica::close);
    }
}
