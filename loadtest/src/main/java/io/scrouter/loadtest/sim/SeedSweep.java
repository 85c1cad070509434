package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.scorer.policy.PolicySettings;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Finds the seed formula's best weights for a set of scenarios, on tuning seeds only: every (utilisation
 * weight, session weight = 1 − it, cap) of a small grid, scored by the geometric mean of p95 and p99 slowdown
 * over all scenarios (so no one scenario's scale dominates). The winner runs as {@code seed-tuned}.
 */
public final class SeedSweep {

    /** Utilisation weights tried; the session weight is one minus each. */
    static final double[] UTILISATION_WEIGHTS = {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0};
    static final long[] CAPS = {10, 50, 200};

    /** The grid's results: the best weights, and each point's score (lower is better). */
    public record Result(PolicySettings best, List<Point> points) {
    }

    public record Point(PolicySettings weights, double score) {
    }

    private SeedSweep() {
    }

    public static List<PolicySettings> grid() {
        List<PolicySettings> grid = new ArrayList<>();
        for (double u : UTILISATION_WEIGHTS) {
            for (long cap : CAPS) {
                if (u == 1.0 && cap != CAPS[0]) {
                    continue; // without a session term the cap changes nothing
                }
                grid.add(new PolicySettings(u, 1.0 - u, cap));
            }
        }
        return grid;
    }

    public static Result run(List<ScenarioSpec> specs, List<Long> tuningSeeds, int threads, ProgressBar bar)
            throws Exception {
        List<PolicySettings> grid = grid();
        List<Contender> contenders = new ArrayList<>();
        for (PolicySettings w : grid) {
            contenders.add(Contenders.named(List.of(name(w)), w, null).get(0));
        }
        Runs.Outcome outcome = Runs.run(specs, contenders, tuningSeeds, threads, bar);
        List<Point> points = new ArrayList<>();
        Point best = null;
        for (int i = 0; i < grid.size(); i++) {
            String n = contenders.get(i).name();
            double logSum = 0;
            int count = 0;
            for (Map<String, Row> rows : outcome.rows().values()) {
                Row r = rows.get(n);
                logSum += Math.log(r.p95()) + Math.log(r.p99());
                count += 2;
            }
            Point p = new Point(grid.get(i), Math.exp(logSum / count));
            points.add(p);
            if (best == null || p.score() < best.score()) {
                best = p;
            }
        }
        return new Result(best.weights(), points);
    }

    static String name(PolicySettings w) {
        return String.format(Locale.ROOT, "seed:%s/%s/%d", trim(w.utilisationWeight()), trim(w.sessionWeight()),
                w.sessionCap());
    }

    private static String trim(double d) {
        return String.format(Locale.ROOT, "%.2f", d).replaceAll("0+$", "").replaceAll("\\.$", "");
    }

    /** The sweep as a markdown table, best first. */
    public static String table(Result result) {
        StringBuilder sb = new StringBuilder("| utilisation weight | session weight | cap | geometric mean of p95 and p99 |\n"
                + "|---:|---:|---:|---:|\n");
        result.points().stream().sorted((a, b) -> Double.compare(a.score(), b.score())).forEach(p ->
                sb.append(String.format(Locale.ROOT, "| %.2f | %.2f | %d | %.2f |%n", p.weights().utilisationWeight(),
                        p.weights().sessionWeight(), p.weights().sessionCap(), p.score())));
        return sb.toString();
    }
}
