package io.scrouter.loadtest.report;

import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.Runs;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The matrix summary: for every scenario, the default policy against the best other contender (the
 * greedy-instant rule left out: no router can see what it sees) and against the seed formula, at p95 and
 * p99 slowdown, with the target checked: at most {@link #BEST_FACTOR} times the best, and at most
 * {@link #SEED_FACTOR} times seed.
 */
public final class MatrixReport {

    public static final double BEST_FACTOR = 1.05;
    public static final double SEED_FACTOR = 1.02;

    /** One scenario's comparison at one percentile. */
    public record Verdict(String scenario, String percentile, double actual, String bestName, double best,
                          double seed) {

        public double vsBest() {
            return actual / best;
        }

        public double vsSeed() {
            return actual / seed;
        }

        public boolean meetsTarget() {
            return vsBest() <= BEST_FACTOR + 1e-9 && vsSeed() <= SEED_FACTOR + 1e-9;
        }
    }

    private MatrixReport() {
    }

    /** Verdicts of {@code policy} at p95 and p99 on every scenario, against every contender but itself and greedy-instant. */
    public static List<Verdict> verdicts(Runs.Outcome outcome, String policy, String seedName) {
        List<Verdict> out = new ArrayList<>();
        for (Map.Entry<String, Map<String, Row>> e : outcome.rows().entrySet()) {
            out.add(verdict(e.getKey(), e.getValue(), policy, seedName, "p95", Row::p95));
            out.add(verdict(e.getKey(), e.getValue(), policy, seedName, "p99", Row::p99));
        }
        return out;
    }

    private static Verdict verdict(String scenario, Map<String, Row> rows, String policy, String seedName, String p,
                                   ToDoubleFunction<Row> value) {
        String bestName = null;
        double best = Double.POSITIVE_INFINITY;
        for (Row r : rows.values()) {
            if (r.contender().equals(policy) || r.contender().equals(Contenders.GREEDY_INSTANT)) {
                continue;
            }
            double v = value.applyAsDouble(r);
            if (v < best) {
                best = v;
                bestName = r.contender();
            }
        }
        return new Verdict(scenario, p, value.applyAsDouble(rows.get(policy)), bestName, best,
                value.applyAsDouble(rows.get(seedName)));
    }

    /** The summary table: one line per scenario, p95 and p99 side by side. */
    public static String summary(List<Verdict> verdicts, String policy) {
        StringBuilder sb = new StringBuilder();
        sb.append("| scenario | ").append(policy).append(" p95 | best other p95 (who) | vs best | seed p95 | vs seed | ")
                .append(policy).append(" p99 | best other p99 (who) | vs best | seed p99 | vs seed | target |\n");
        sb.append("|---|---:|---|---:|---:|---:|---:|---|---:|---:|---:|:---:|\n");
        for (int i = 0; i + 1 < verdicts.size(); i += 2) {
            Verdict a = verdicts.get(i);
            Verdict b = verdicts.get(i + 1);
            sb.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f (%s) | %s | %.1f | %s | %.1f | %.1f (%s) | %s | %.1f | %s | %s |%n",
                    a.scenario(), a.actual(), a.best(), a.bestName(), ratio(a.vsBest(), BEST_FACTOR), a.seed(),
                    ratio(a.vsSeed(), SEED_FACTOR), b.actual(), b.best(), b.bestName(), ratio(b.vsBest(), BEST_FACTOR),
                    b.seed(), ratio(b.vsSeed(), SEED_FACTOR), a.meetsTarget() && b.meetsTarget() ? "met" : "**missed**"));
        }
        long met = verdicts.stream().filter(Verdict::meetsTarget).count();
        sb.append(String.format(Locale.ROOT, "%nTarget met on %d of %d scenario-percentiles (at most %.2f× the best "
                + "other contender and %.2f× seed).%n", met, verdicts.size(), BEST_FACTOR, SEED_FACTOR));
        return sb.toString();
    }

    /** A ratio as {@code 0.97×}, bold when above its limit. */
    private static String ratio(double r, double limit) {
        String s = String.format(Locale.ROOT, "%.3f×", r);
        return r > limit + 1e-9 ? "**" + s + "**" : s;
    }
}
