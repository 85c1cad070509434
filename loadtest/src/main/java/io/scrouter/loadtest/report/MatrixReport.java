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

    /**
     * One scenario's comparison at one percentile. {@code noiseBest} and {@code noiseSeed} are two standard
     * errors of the ratio, from how much it varies from seed to seed (a difference smaller than that could be
     * luck of the draw).
     */
    public record Verdict(String scenario, String percentile, double actual, String bestName, double best,
                          double seed, double noiseBest, double noiseSeed) {

        public double vsBest() {
            return actual / best;
        }

        public double vsSeed() {
            return actual / seed;
        }

        public boolean meetsTarget() {
            return vsBest() <= BEST_FACTOR + 1e-9 && vsSeed() <= SEED_FACTOR + 1e-9;
        }

        /** Missed, but by less than the noise of the comparison. */
        public boolean withinNoise() {
            return vsBest() <= BEST_FACTOR * (1 + noiseBest) && vsSeed() <= SEED_FACTOR * (1 + noiseSeed);
        }
    }

    private MatrixReport() {
    }

    /** Verdicts of {@code policy} at p95 and p99 on every scenario, against every contender but itself and greedy-instant. */
    public static List<Verdict> verdicts(Runs.Outcome outcome, String policy, String seedName) {
        List<Verdict> out = new ArrayList<>();
        for (Map.Entry<String, Map<String, Row>> e : outcome.rows().entrySet()) {
            out.add(verdict(outcome, e.getKey(), e.getValue(), policy, seedName, "p95", Row::p95, Runs.PerSeed::p95));
            out.add(verdict(outcome, e.getKey(), e.getValue(), policy, seedName, "p99", Row::p99, Runs.PerSeed::p99));
        }
        return out;
    }

    /** Two standard errors of the mean per-seed log ratio of {@code a} to {@code b}, as a fraction; 0 with one seed. */
    static double noise(Runs.Outcome outcome, String scenario, String a, String b,
                        ToDoubleFunction<Runs.PerSeed> value) {
        Map<Long, Double> ofA = new java.util.HashMap<>();
        Map<Long, Double> ofB = new java.util.HashMap<>();
        for (Runs.PerSeed r : outcome.perSeed()) {
            if (r.scenario().equals(scenario) && r.contender().equals(a)) {
                ofA.put(r.seed(), value.applyAsDouble(r));
            } else if (r.scenario().equals(scenario) && r.contender().equals(b)) {
                ofB.put(r.seed(), value.applyAsDouble(r));
            }
        }
        double[] logs = ofA.keySet().stream().filter(ofB::containsKey)
                .mapToDouble(seed -> Math.log(ofA.get(seed) / ofB.get(seed))).toArray();
        if (logs.length < 2) {
            return 0;
        }
        double mean = java.util.Arrays.stream(logs).average().orElse(0);
        double var = java.util.Arrays.stream(logs).map(l -> (l - mean) * (l - mean)).sum() / (logs.length - 1);
        return Math.exp(2 * Math.sqrt(var / logs.length)) - 1;
    }

    private static Verdict verdict(Runs.Outcome outcome, String scenario, Map<String, Row> rows, String policy,
                                   String seedName, String p, ToDoubleFunction<Row> value,
                                   ToDoubleFunction<Runs.PerSeed> perSeed) {
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
                value.applyAsDouble(rows.get(seedName)), noise(outcome, scenario, policy, bestName, perSeed),
                noise(outcome, scenario, policy, seedName, perSeed));
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
            String target = a.meetsTarget() && b.meetsTarget() ? "met"
                    : a.withinNoise() && b.withinNoise() ? "missed, within noise" : "**missed**";
            sb.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f (%s) | %s | %.1f | %s | %.1f | %.1f (%s) | %s | %.1f | %s | %s |%n",
                    a.scenario(), a.actual(), a.best(), a.bestName(), ratio(a.vsBest(), a.noiseBest(), BEST_FACTOR),
                    a.seed(), ratio(a.vsSeed(), a.noiseSeed(), SEED_FACTOR), b.actual(), b.best(), b.bestName(),
                    ratio(b.vsBest(), b.noiseBest(), BEST_FACTOR), b.seed(), ratio(b.vsSeed(), b.noiseSeed(), SEED_FACTOR),
                    target));
        }
        long met = verdicts.stream().filter(Verdict::meetsTarget).count();
        long scenarios = verdicts.size() / 2;
        long allMet = 0;
        long noisy = 0;
        for (int i = 0; i + 1 < verdicts.size(); i += 2) {
            boolean both = verdicts.get(i).meetsTarget() && verdicts.get(i + 1).meetsTarget();
            allMet += both ? 1 : 0;
            noisy += !both && verdicts.get(i).withinNoise() && verdicts.get(i + 1).withinNoise() ? 1 : 0;
        }
        sb.append(String.format(Locale.ROOT, "%nTarget (at most %.2f× the best other contender and %.2f× seed, at p95 "
                + "and p99) met on %d of %d scenarios (%d of %d scenario-percentiles); missed by less than the noise "
                + "on %d more. ± is two standard errors of the ratio, from its spread over the seeds.%n", BEST_FACTOR,
                SEED_FACTOR, allMet, scenarios, met, verdicts.size(), noisy));
        return sb.toString();
    }

    /** A ratio as {@code 0.97× ±3%}, bold when above its limit. */
    private static String ratio(double r, double noise, double limit) {
        String s = String.format(Locale.ROOT, "%.3f×", r);
        s = r > limit + 1e-9 ? "**" + s + "**" : s;
        return noise > 0 ? s + String.format(Locale.ROOT, " ±%.0f%%", noise * 100) : s;
    }
}
