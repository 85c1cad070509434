package io.scrouter.loadtest.report;

import java.util.List;
import java.util.Locale;

/** Renders a scenario's rows as a GitHub-flavoured markdown table, with p95 and p99 relative to a reference row. */
public final class MarkdownTable {

    private MarkdownTable() {
    }

    public static String render(List<Row> rows, String reference) {
        Row ref = rows.stream().filter(r -> r.contender().equals(reference)).findFirst().orElse(null);
        StringBuilder sb = new StringBuilder();
        sb.append("| policy | p50 slowdown | p95 slowdown | p99 slowdown | p95 vs ").append(reference)
                .append(" | p99 vs ").append(reference)
                .append(" | queries | demand, busiest replica | demand, mean replica | sessions/replica at snapshot (min–max) | failed queries |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row r : rows) {
            String vs95 = ref == null ? "" : String.format(Locale.ROOT, "%+.1f%%", (r.p95() / ref.p95() - 1) * 100);
            String vs99 = ref == null ? "" : String.format(Locale.ROOT, "%+.1f%%", (r.p99() / ref.p99() - 1) * 100);
            sb.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | %s | %s | %d | %.2f | %.2f | %.0f–%.0f | %d |%n",
                    r.contender(), r.p50(), r.p95(), r.p99(), vs95, vs99, r.completedQueries(), r.maxUtilisation(),
                    r.meanUtilisation(), r.minSessions(), r.maxSessions(), r.failedQueries()));
        }
        return sb.toString();
    }
}
