package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Workload;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs every (scenario, contender, seed) of a comparison on a thread pool and pools each contender's seeds
 * into one {@link Row} per scenario. Each run's slowdowns are dropped once its row is complete, so a large
 * matrix does not hold every query of every run in memory at once.
 */
public final class Runs {

    /** One run's headline figures, kept for the per-seed view. */
    public record PerSeed(String scenario, String contender, long seed, double p95, double p99, long completed) {
    }

    /** Rows by scenario (in the order given), then by contender (in the order given), and the per-seed figures. */
    public record Outcome(Map<String, Map<String, Row>> rows, List<PerSeed> perSeed) {

        public Row row(String scenario, String contender) {
            Map<String, Row> byContender = rows.get(scenario);
            return byContender == null ? null : byContender.get(contender);
        }
    }

    private Runs() {
    }

    public static Outcome run(List<ScenarioSpec> specs, List<Contender> contenders, List<Long> seeds, int threads,
                              ProgressBar bar) throws Exception {
        record Job(ScenarioSpec spec, Contender contender, long seed, Workload workload) {
        }
        List<Job> jobs = new ArrayList<>();
        for (ScenarioSpec spec : specs) {
            for (Contender c : contenders) {
                for (long seed : seeds) {
                    jobs.add(new Job(spec, c, seed, null));
                }
            }
        }
        Map<String, Workload> workloads = new HashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
        try {
            List<Future<SimResult>> futures = new ArrayList<>();
            for (Job j : jobs) {
                String key = j.spec().name() + "#" + j.seed();
                Workload w = workloads.computeIfAbsent(key, k -> new Workload(j.spec(), j.seed()));
                futures.add(pool.submit(() -> new Simulation(j.spec(), w, j.contender(), j.seed()).run(bar::add)));
            }
            Map<String, Map<String, Row>> rows = new LinkedHashMap<>();
            List<PerSeed> perSeed = new ArrayList<>();
            int i = 0;
            for (ScenarioSpec spec : specs) {
                Map<String, Row> byContender = new LinkedHashMap<>();
                for (Contender c : contenders) {
                    List<SimResult> group = new ArrayList<>();
                    for (long seed : seeds) {
                        SimResult r = futures.get(i).get();
                        futures.set(i, null);
                        i++;
                        group.add(r);
                        perSeed.add(new PerSeed(spec.name(), c.name(), seed, r.slowdown(0.95), r.slowdown(0.99),
                                r.completedQueries()));
                    }
                    byContender.put(c.name(), Row.pool(c.name(), group));
                }
                rows.put(spec.name(), byContender);
            }
            return new Outcome(rows, perSeed);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Total progress units of a run set (arrivals of every run), for a progress bar. */
    public static long units(List<ScenarioSpec> specs, int contenders, List<Long> seeds) {
        long total = 0;
        for (ScenarioSpec spec : specs) {
            for (long seed : seeds) {
                total += (long) new Workload(spec, seed).arrivals().size() * contenders;
            }
        }
        return total;
    }
}
