package io.scrouter.loadtest;

import io.scrouter.loadtest.report.ComparisonChart;
import io.scrouter.loadtest.report.MarkdownTable;
import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.sim.Contender;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.SimResult;
import io.scrouter.loadtest.sim.Simulation;
import io.scrouter.loadtest.trace.Scenario;
import io.scrouter.loadtest.trace.Scenarios;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceGenerator;
import io.scrouter.scorer.policy.PolicySettings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The policy comparison: every scenario, every contender, the same traces (several seeds each), run in the
 * simulator; writes one markdown file of tables and one PNG chart per scenario, and prints the tables.
 */
public final class Compare {

    private static final String USAGE = "compare [--scenarios steady,burst,...] [--contenders random,seed,...] "
            + "[--seeds 3] [--out loadtest/results] [--threads N]";

    private Compare() {
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, Set.of("scenarios", "contenders", "seeds", "out", "threads"), USAGE);
        List<String> scenarioNames = Arrays.asList(args.get("scenarios", String.join(",", Scenarios.NAMES)).split(","));
        PolicySettings settings = PolicySettings.DEFAULTS;
        List<Contender> contenders = args.get("contenders", null) == null ? Contenders.all(settings)
                : Contenders.named(Arrays.asList(args.get("contenders", "").split(",")), settings);
        int seeds = (int) args.getLong("seeds", 3);
        Path out = Path.of(args.get("out", "loadtest/results"));
        int threads = (int) args.getLong("threads", Runtime.getRuntime().availableProcessors());
        Files.createDirectories(out);

        long started = System.nanoTime();
        Map<String, List<Row>> tables = run(scenarioNames, contenders, seeds, threads);
        double seconds = (System.nanoTime() - started) / 1e9;

        StringBuilder md = new StringBuilder();
        md.append("Policy comparison, ").append(LocalDate.now()).append(", ").append(seeds)
                .append(" seeds per scenario, ").append(String.format("%.0f", seconds)).append(" s on ")
                .append(Runtime.getRuntime().availableProcessors()).append(" cores.\n\n");
        for (Map.Entry<String, List<Row>> e : tables.entrySet()) {
            Scenario s = Scenarios.byName(e.getKey());
            md.append("### ").append(s.name()).append(": ").append(s.summary()).append("\n\n");
            md.append(MarkdownTable.render(e.getValue(), "seed")).append('\n');
            md.append("![").append(s.name()).append("](").append(s.name()).append(".png)\n\n");
            ComparisonChart.write(s.name() + ": " + s.summary(), e.getValue(), out.resolve(s.name() + ".png"));
        }
        Files.writeString(out.resolve("comparison.md"), md.toString());
        System.out.print(md);
        System.out.println("wrote " + out.resolve("comparison.md") + " and " + tables.size() + " charts");
    }

    /** Runs every (scenario, seed, contender) in parallel and pools each contender's seeds. */
    public static Map<String, List<Row>> run(List<String> scenarioNames, List<Contender> contenders, int seeds,
                                             int threads) throws Exception {
        record Job(Scenario scenario, Contender contender, long seed, List<TraceEvent> trace) {
        }
        List<Job> jobs = new ArrayList<>();
        long totalEvents = 0;
        for (String name : scenarioNames) {
            Scenario scenario = Scenarios.byName(name.trim());
            for (long seed = 1; seed <= seeds; seed++) {
                List<TraceEvent> trace = new TraceGenerator(scenario, seed).generate();
                for (Contender c : contenders) {
                    jobs.add(new Job(scenario, c, seed, trace));
                    totalEvents += trace.size();
                }
            }
        }
        ProgressBar bar = new ProgressBar("simulating " + jobs.size() + " runs", totalEvents, System.err);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<SimResult>> futures = new ArrayList<>();
        try {
            for (Job j : jobs) {
                futures.add(pool.submit(() -> new Simulation(j.scenario(), j.trace(), j.contender(), j.seed())
                        .run(bar::add)));
            }
            Map<String, Map<String, List<SimResult>>> byScenario = new LinkedHashMap<>();
            for (int i = 0; i < jobs.size(); i++) {
                Job j = jobs.get(i);
                byScenario.computeIfAbsent(j.scenario().name(), k -> new LinkedHashMap<>())
                        .computeIfAbsent(j.contender().name(), k -> new ArrayList<>()).add(futures.get(i).get());
            }
            bar.finish();
            Map<String, List<Row>> tables = new LinkedHashMap<>();
            byScenario.forEach((scenario, runs) -> {
                List<Row> rows = new ArrayList<>();
                runs.forEach((contender, results) -> rows.add(Row.pool(contender, results)));
                tables.put(scenario, rows);
            });
            return tables;
        } finally {
            pool.shutdownNow();
        }
    }
}
