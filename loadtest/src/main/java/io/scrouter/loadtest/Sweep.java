package io.scrouter.loadtest;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.cli.Seeds;
import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.sim.Contender;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.Runs;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code loadtest sweep}: variants of a policy (such as {@code predicted:0.4/32/recent}) against every contender of
 * the matrix, on the matrix's scenarios and its tuning seeds, scored as the matrix scores the default. This is how
 * the default's settings were chosen without looking at the held-out seeds.
 *
 * <p>For each variant: on how many scenarios it meets the matrix's target (at most 1.05× the best other contender
 * and 1.02× seed, at p95 and p99), and the geometric means of its ratios to the best other contender and to seed
 * over every scenario and both percentiles. "Other" leaves out the greedy-instant rule, the default and the other
 * variants: each variant is judged as the default would be.
 */
@Command(name = "sweep", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = "Score variants of a policy against every contender of the matrix, on the matrix's scenarios and "
                + "its tuning seeds, as the matrix scores the default.")
public final class Sweep implements Callable<Integer> {

    @Option(names = "--variants", required = true, split = ",", paramLabel = "NAME",
            description = "The variants, such as predicted:0.4/32/recent,predicted:0.5/4/bound.")
    List<String> variantNames;

    @Option(names = "--scenarios", split = ",", paramLabel = "NAME",
            description = "Scenarios to run (default: those of the matrix).")
    List<String> scenarios;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--seeds", defaultValue = "1-3", paramLabel = "SEEDS", converter = Seeds.Value.class,
            description = "Seeds, the matrix's tuning seeds by default (default: ${DEFAULT-VALUE}).")
    Seeds seedList;

    @Option(names = "--seed-weights", paramLabel = "U,S,CAP", converter = Compare.SeedWeights.class,
            description = "Weights of seed-tuned, such as 0.5,0.5,50; adds seed-tuned to the contenders.")
    PolicySettings seedWeights;

    @Option(names = "--threads", paramLabel = "N", description = "Simulation threads, 1 to 256 (default: the cores).")
    Integer threadCount;

    @Spec
    CommandSpec command;

    Sweep() {
    }

    @Override
    public Integer call() throws Exception {
        if (variantNames.stream().allMatch(String::isBlank)) {
            throw new ParameterException(command.commandLine(),
                    "--variants needs at least one contender, such as predicted:0.4/32/recent");
        }
        List<ScenarioSpec> specs = new ArrayList<>();
        for (String name : scenarios == null ? Matrix.SCENARIOS : scenarios) {
            specs.add(ScenarioFiles.load(name, overrides.values()));
        }
        List<Long> seeds = seedList.values();
        int threads = Compare.threads(command, threadCount);
        PolicySettings settings = Compare.settings(specs.get(0));
        PolicySettings tuned = seedWeights;
        List<Contender> variants = Contenders.named(variantNames, settings, tuned);
        List<Contender> contenders = new ArrayList<>(Contenders.all(settings, tuned));
        contenders.addAll(variants);

        ProgressBar bar = new ProgressBar("sweep: " + specs.size() + " scenarios x " + contenders.size()
                + " contenders x " + seeds.size() + " seeds", Runs.units(specs, contenders.size(), seeds), System.err);
        Runs.Outcome outcome = Runs.run(specs, contenders, seeds, threads, bar);
        bar.finish();

        StringBuilder md = new StringBuilder(String.format(Locale.ROOT, "seeds %s, %d scenarios%n%n", seeds, specs.size()));
        md.append("| variant | scenarios meeting the target | geometric mean vs best other | vs seed | worst vs best other |\n")
                .append("|---|---:|---:|---:|---|\n");
        for (Contender v : variants) {
            int met = 0;
            double logBest = 0;
            double logSeed = 0;
            double worst = 0;
            String worstAt = "";
            for (ScenarioSpec spec : specs) {
                Map<String, Row> rows = outcome.rows().get(spec.name());
                Row mine = rows.get(v.name());
                Row seed = rows.get("seed");
                double best95 = Double.POSITIVE_INFINITY;
                double best99 = Double.POSITIVE_INFINITY;
                for (Row r : rows.values()) {
                    String n = r.contender();
                    if (n.equals(Contenders.GREEDY_INSTANT) || n.equals(Policies.DEFAULT) || variantNames.contains(n)) {
                        continue;
                    }
                    best95 = Math.min(best95, r.p95());
                    best99 = Math.min(best99, r.p99());
                }
                double[] vsBest = {mine.p95() / best95, mine.p99() / best99};
                double[] vsSeed = {mine.p95() / seed.p95(), mine.p99() / seed.p99()};
                boolean ok = true;
                for (int i = 0; i < 2; i++) {
                    ok &= vsBest[i] <= 1.05 + 1e-9 && vsSeed[i] <= 1.02 + 1e-9;
                    logBest += Math.log(vsBest[i]);
                    logSeed += Math.log(vsSeed[i]);
                    if (vsBest[i] > worst) {
                        worst = vsBest[i];
                        worstAt = spec.name() + (i == 0 ? " p95" : " p99");
                    }
                }
                met += ok ? 1 : 0;
            }
            int n = 2 * specs.size();
            md.append(String.format(Locale.ROOT, "| %s | %d of %d | %.3f× | %.3f× | %.3f× (%s) |%n", v.name(), met,
                    specs.size(), Math.exp(logBest / n), Math.exp(logSeed / n), worst, worstAt));
        }
        System.out.print(md);
        return 0;
    }
}
