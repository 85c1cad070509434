package io.scrouter.loadtest.report;

import io.scrouter.loadtest.sim.GroupRuns;
import io.scrouter.loadtest.sim.SimResult;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * Renders a with-and-without-groups comparison as markdown: each team's slowdown percentiles both ways, as the
 * median and range over the seeds of each seed's percentile, then each seed's ratio (with groups / without),
 * again as median and range, so the spread between seeds shows next to the effect.
 */
public final class TeamTable {

    static final double[] QUANTILES = {0.50, 0.95, 0.99};

    private TeamTable() {
    }

    public static String render(GroupRuns.Outcome o) {
        StringBuilder sb = new StringBuilder();
        sb.append("| team | routers | p50 slowdown | p95 slowdown | p99 slowdown | queries per run | sessions placed on "
                + "(replica group) | placements refused |\n|---|---|---:|---:|---:|---:|---|---:|\n");
        for (String team : o.withGroups().keySet()) {
            row(sb, team, "no groups", o.withoutGroups().get(team));
            row(sb, team, "groups", o.withGroups().get(team));
        }
        sb.append("\n| team | p50 with / without groups | p95 with / without groups | p99 with / without groups |\n"
                + "|---|---:|---:|---:|\n");
        for (String team : o.withGroups().keySet()) {
            List<SimResult.Team> with = o.withGroups().get(team);
            List<SimResult.Team> without = o.withoutGroups().get(team);
            sb.append("| ").append(team);
            for (double q : QUANTILES) {
                double[] ratios = new double[with.size()];
                for (int i = 0; i < ratios.length; i++) {
                    ratios[i] = with.get(i).slowdown(q) / without.get(i).slowdown(q);
                }
                sb.append(" | ").append(spread(ratios, "×"));
            }
            sb.append(" |\n");
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String team, String routers, List<SimResult.Team> runs) {
        sb.append("| ").append(team).append(" | ").append(routers);
        for (double q : QUANTILES) {
            sb.append(" | ").append(spread(each(runs, t -> t.slowdown(q)), ""));
        }
        Map<String, Long> placed = new TreeMap<>();
        long refused = 0;
        for (SimResult.Team t : runs) {
            t.placedOn().forEach((group, n) -> placed.merge(group, n, Long::sum));
            refused += t.refused();
        }
        long total = placed.values().stream().mapToLong(Long::longValue).sum();
        List<String> shares = new ArrayList<>();
        placed.forEach((group, n) -> shares.add(String.format(Locale.ROOT, "%s %.0f%%", group, 100.0 * n / total)));
        sb.append(String.format(Locale.ROOT, " | %.0f | %s | %d |%n", median(each(runs, t -> t.slowdowns().length)),
                String.join(", ", shares), refused));
    }

    private static double[] each(List<SimResult.Team> runs, ToDoubleFunction<SimResult.Team> f) {
        return runs.stream().mapToDouble(f).toArray();
    }

    /** "median (min–max)" of the values, each followed by {@code unit}. */
    static String spread(double[] values, String unit) {
        double[] v = values.clone();
        Arrays.sort(v);
        return String.format(Locale.ROOT, "%s%s (%s–%s)", number(median(v)), unit, number(v[0]), number(v[v.length - 1]));
    }

    /** Two decimals, fewer for large values, and at least two significant digits for small ones (0.0031). */
    static String number(double d) {
        double a = Math.abs(d);
        int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 0.1 || a == 0 ? 2 : Math.min(6, 1 - (int) Math.floor(Math.log10(a)));
        return String.format(Locale.ROOT, "%." + decimals + "f", d);
    }

    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
