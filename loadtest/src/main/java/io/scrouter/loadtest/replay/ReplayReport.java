package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.bench.Latencies;
import io.scrouter.loadtest.sim.SimResult;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Prints a replay against the service as markdown: placement quality in the simulator's terms (query
 * slowdown, demand of the busiest and mean replica), sessions and demand per replica over time, and the
 * service's decision latency, so both can be read off one run.
 */
public final class ReplayReport {

    private static final int TIMELINE_ROWS = 12;

    private ReplayReport() {
    }

    public static String render(ReplayStats stats, List<String> replicaIds) {
        StringBuilder sb = new StringBuilder();
        placementQuality(sb, stats, replicaIds);
        timeline(sb, stats, replicaIds);
        decisionLatency(sb, stats);
        pinning(sb, stats);
        return sb.toString();
    }

    private static void placementQuality(StringBuilder sb, ReplayStats stats, List<String> ids) {
        double[] meanDemand = meanDemandPerReplica(stats.timeline(), ids.size());
        SimResult q = new SimResult("replay", "service", stats.sortedSlowdowns(), 0, stats.queriesSubmitted(), meanDemand,
                new int[0]);
        sb.append("Placement quality (slowdown = time in system / time alone on an idle replica; demand = "
                + "(running + waiting tasks) / slots, time-averaged)\n\n");
        sb.append("| queries run | unfinished at the end | p50 slowdown | p95 slowdown | p99 slowdown "
                + "| demand, busiest replica | demand, mean replica |\n|---:|---:|---:|---:|---:|---:|---:|\n");
        sb.append(String.format(Locale.ROOT, "| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f |%n%n",
                q.completedQueries(), stats.queriesSubmitted() - q.completedQueries(), q.slowdown(0.50),
                q.slowdown(0.95), q.slowdown(0.99), q.maxUtilisation(), q.meanUtilisation()));
        sb.append("| replica | sessions placed | peak sessions | mean demand | peak demand |\n|---|---:|---:|---:|---:|\n");
        List<ReplayStats.Sample> timeline = stats.timeline();
        for (int i = 0; i < ids.size(); i++) {
            int r = i;
            var placed = stats.placements.get(ids.get(i));
            sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %.2f | %.2f |%n", ids.get(i),
                    placed == null ? 0 : placed.get(),
                    timeline.stream().mapToInt(s -> s.sessions()[r]).max().orElse(0), meanDemand[i],
                    timeline.stream().mapToDouble(s -> s.demand()[r]).max().orElse(0)));
        }
        sb.append('\n');
    }

    /** Sessions at the end of each window and demand averaged over it, for each replica. */
    private static void timeline(StringBuilder sb, ReplayStats stats, List<String> ids) {
        List<ReplayStats.Sample> samples = stats.timeline();
        if (samples.isEmpty()) {
            return;
        }
        sb.append("Over time (trace seconds; each cell: sessions · mean demand in the window)\n\n| until t |");
        ids.forEach(id -> sb.append(' ').append(id).append(" |"));
        sb.append("\n|---:|").append("---:|".repeat(ids.size())).append('\n');
        int rows = Math.min(TIMELINE_ROWS, samples.size());
        for (int w = 0; w < rows; w++) {
            List<ReplayStats.Sample> window = samples.subList(w * samples.size() / rows,
                    (w + 1) * samples.size() / rows);
            ReplayStats.Sample last = window.get(window.size() - 1);
            sb.append(String.format(Locale.ROOT, "| %.0f |", last.traceSeconds()));
            for (int i = 0; i < ids.size(); i++) {
                int r = i;
                double demand = window.stream().mapToDouble(s -> s.demand()[r]).average().orElse(0);
                sb.append(String.format(Locale.ROOT, " %d · %.2f |", last.sessions()[i], demand));
            }
            sb.append('\n');
        }
        sb.append('\n');
    }

    private static void decisionLatency(StringBuilder sb, ReplayStats stats) {
        sb.append("Decision latency (one Process stream, sent to answered, on this client)\n\n");
        sb.append("| request kind | requests | p50 (ms) | p95 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n");
        latencyRow(sb, "session start (placement)", stats.newSessionDecisions);
        latencyRow(sb, "later requests of a session", stats.knownSessionDecisions);
        sb.append('\n');
    }

    private static void latencyRow(StringBuilder sb, String kind, Latencies l) {
        sb.append(String.format(Locale.ROOT, "| %s | %d | %.3f | %.3f | %.3f |%n", kind, l.count(),
                l.micros(0.50) / 1000, l.micros(0.95) / 1000, l.micros(0.99) / 1000));
    }

    private static void pinning(StringBuilder sb, ReplayStats stats) {
        Map<Integer, Long> rejections = new TreeMap<>();
        stats.rejectionsByCode.forEach((code, n) -> rejections.put(code, n.get()));
        sb.append(String.format(Locale.ROOT, "Requests routed to a replica other than their session's: %d. "
                        + "Routed to an address outside the simulated pool: %d. Rejected (by gRPC status code): %s. "
                        + "Transport errors: %d.%n", stats.routedElsewhere(), stats.routedOutsidePool.get(),
                rejections.isEmpty() ? "none" : rejections, stats.transportErrors.get()));
    }

    static double[] meanDemandPerReplica(List<ReplayStats.Sample> samples, int replicas) {
        double[] mean = new double[replicas];
        for (ReplayStats.Sample s : samples) {
            for (int i = 0; i < replicas; i++) {
                mean[i] += s.demand()[i] / samples.size();
            }
        }
        return mean;
    }
}
