package io.scrouter.loadtest.fault;

import io.scrouter.loadtest.traffic.TrafficDriver.Result;

import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Figures computed from the requests a fault run sent: pure functions, so they are unit-tested. */
final class Figures {

    /** gRPC status of a request the router answered with a route (TrafficDriver's convention). */
    static final int ROUTED = -1;
    /** The exchange itself failed (no answer from the router). */
    static final int TRANSPORT_ERROR = -2;

    private Figures() {
    }

    /** Each session's first replica address, by request start time, whichever router answered. */
    static Map<String, String> homes(List<Result> results) {
        Map<String, String> home = new HashMap<>();
        results.stream().filter(r -> r.upstream() != null).sorted(Comparator.comparingLong(Result::atNanos))
                .forEach(r -> home.putIfAbsent(r.session(), r.upstream()));
        return home;
    }

    /**
     * Sessions that two router instances routed to different replicas, each router judged by the first address
     * it answered for the session. Zero is the design target: routers agree with or without Redis.
     */
    static Set<String> placedDifferently(List<Result> results) {
        Map<String, Map<Integer, String>> firstByRouter = new HashMap<>();
        results.stream().filter(r -> r.upstream() != null).sorted(Comparator.comparingLong(Result::atNanos))
                .forEach(r -> firstByRouter.computeIfAbsent(r.session(), s -> new HashMap<>())
                        .putIfAbsent(r.router(), r.upstream()));
        Set<String> out = new HashSet<>();
        firstByRouter.forEach((session, byRouter) -> {
            if (new HashSet<>(byRouter.values()).size() > 1) {
                out.add(session);
            }
        });
        return out;
    }

    /** Requests routed somewhere other than their session's home: a moved session's requests. */
    static long offHome(List<Result> results, Map<String, String> home) {
        return results.stream().filter(r -> r.upstream() != null && !r.upstream().equals(home.get(r.session())))
                .count();
    }

    /** Requests answered with {@code status} (a gRPC code, {@link #ROUTED} or {@link #TRANSPORT_ERROR}). */
    static long withStatus(List<Result> results, int status) {
        return results.stream().filter(r -> r.grpcStatus() == status).count();
    }

    /** Requests not routed, by answer: gRPC status names, or "transport" for a failed exchange. */
    static Map<String, Long> refusals(List<Result> results) {
        Map<String, Long> out = new java.util.TreeMap<>();
        for (Result r : results) {
            if (r.upstream() == null) {
                String name = r.grpcStatus() == TRANSPORT_ERROR ? "transport"
                        : r.grpcStatus() == ROUTED ? "no-route-header"
                        : io.grpc.Status.fromCodeValue(r.grpcStatus()).getCode().name();
                out.merge(name, 1L, Long::sum);
            }
        }
        return out;
    }

    /** Nearest-rank q-quantile of request latency in milliseconds; NaN when empty. */
    static double millis(List<Result> results, double q) {
        if (results.isEmpty()) {
            return Double.NaN;
        }
        long[] n = results.stream().mapToLong(Result::nanos).sorted().toArray();
        int rank = (int) Math.ceil(q * n.length);
        return n[Math.max(0, Math.min(n.length - 1, rank - 1))] / 1e6;
    }

    /** "p50/p95/p99 ms" of a window, for the printed table. */
    static String quantiles(List<Result> results) {
        return String.format("%.2f / %.2f / %.2f", millis(results, 0.5), millis(results, 0.95), millis(results, 0.99));
    }

    /** Seconds between two nanoTime stamps, or "-" when the later one never happened. */
    static String seconds(long fromNanos, long toNanos) {
        return toNanos == Long.MIN_VALUE || toNanos == Long.MAX_VALUE ? "-"
                : String.format("%.2f s", (toNanos - fromNanos) / 1e9);
    }
}
