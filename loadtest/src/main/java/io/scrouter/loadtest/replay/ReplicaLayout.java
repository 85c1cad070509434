package io.scrouter.loadtest.replay;

import java.util.List;
import java.util.stream.IntStream;

/**
 * Where the simulated replicas live: {@code replica-a}, {@code replica-b}, … with gRPC addresses
 * {@code 127.0.0.1:<grpcBasePort + i>} and Spark REST on {@code 127.0.0.1:<metricsBasePort + i>} (free ports
 * when 0). Fixed ports let the pool be written into a service's configuration before the replay starts;
 * the defaults (15002, 4040) are those of the embedded default's two replicas.
 */
public record ReplicaLayout(int count, int grpcBasePort, int metricsBasePort) {

    /** One replica as a static pool lists it. */
    public record PoolEntry(String id, String grpc, String metricsUrl) {
    }

    public ReplicaLayout {
        if (count < 1 || count > 26) {
            throw new IllegalArgumentException("between 1 and 26 replicas, got " + count);
        }
        if (grpcBasePort < 1 || grpcBasePort + count > 65_536 || metricsBasePort < 0
                || metricsBasePort + count > 65_536) {
            throw new IllegalArgumentException("ports out of range: grpc from " + grpcBasePort + ", metrics from "
                    + metricsBasePort);
        }
    }

    public String id(int i) {
        return "replica-" + (char) ('a' + i);
    }

    public String grpcAddress(int i) {
        return "127.0.0.1:" + (grpcBasePort + i);
    }

    /** 0 means a free port, chosen when the replica starts. */
    public int metricsPort(int i) {
        return metricsBasePort == 0 ? 0 : metricsBasePort + i;
    }

    /** The pool as it will be, known before anything starts; needs fixed metrics ports. */
    public List<PoolEntry> plannedPool() {
        if (metricsBasePort == 0) {
            throw new IllegalArgumentException("a pool written in advance needs fixed metrics ports: pass "
                    + "--metrics-base-port");
        }
        return IntStream.range(0, count).mapToObj(i -> new PoolEntry(id(i), grpcAddress(i),
                "http://127.0.0.1:" + metricsPort(i))).toList();
    }

    /** The {@code pool} section of a service configuration naming exactly these replicas, all ready. */
    public static String staticPoolYaml(List<PoolEntry> pool) {
        StringBuilder sb = new StringBuilder("pool:\n  pollInterval: 1s\n  static:\n");
        for (PoolEntry e : pool) {
            sb.append("    - {id: ").append(e.id()).append(", grpc: \"").append(e.grpc())
                    .append("\", metricsUrl: \"").append(e.metricsUrl()).append("\", state: ready}\n");
        }
        return sb.toString();
    }
}
