package io.scrouter.loadtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.cli.Seeds;
import io.scrouter.loadtest.report.ComparisonChart;
import io.scrouter.loadtest.report.MarkdownTable;
import io.scrouter.loadtest.report.MatrixChart;
import io.scrouter.loadtest.report.MatrixReport;
import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.sim.Contender;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.Runs;
import io.scrouter.loadtest.sim.SeedSweep;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code loadtest matrix}: the whole scenario matrix in one command. First the seed formula's weights are
 * swept on the tuning seeds; then every contender (with {@code seed-tuned} at the sweep's best) runs on the
 * tuning seeds and, separately, on the held-out seeds. Writes {@code matrix.md} (summary of the default
 * against the best other contender and seed, held-out first, then tuning, then each scenario in full),
 * {@code matrix.json}, an overview chart and one chart per scenario.
 */
@Command(name = "matrix", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = "The whole scenario matrix: sweep the seed formula's weights on the tuning seeds, then run every "
                + "contender on every scenario, on the tuning and, separately, the held-out seeds.")
public final class Matrix implements Callable<Integer> {

    /** The scenarios of the matrix, in table order (files in loadtest/scenarios/). */
    public static final List<String> SCENARIOS = List.of("steady",
            "burst-0.5s-small", "burst-0.5s-large", "burst-5s-small", "burst-5s-large", "burst-30s-small",
            "burst-30s-large", "routers-2", "routers-4", "heavy-5", "heavy-15", "heavy-30", "interactive", "day",
            "churn", "probe-250ms", "probe-5s", "mixed-sizes", "join-leave", "idle-notebooks");

    @Option(names = "--scenarios", split = ",", paramLabel = "NAME",
            description = "Scenarios to run (default: every scenario of the matrix, as listed in loadtest/README.md).")
    List<String> scenarios;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--tuning-seeds", defaultValue = "1-3", paramLabel = "SEEDS", converter = Seeds.Value.class,
            description = "Seeds the weight sweep and the tuning tables use (default: ${DEFAULT-VALUE}).")
    Seeds tuningSeeds;

    @Option(names = "--held-out-seeds", defaultValue = "4-10", paramLabel = "SEEDS", converter = Seeds.Value.class,
            description = "Seeds used for nothing else, for the headline tables (default: ${DEFAULT-VALUE}).")
    Seeds heldOutSeeds;

    @Option(names = "--seed-weights", paramLabel = "U,S,CAP", converter = Compare.SeedWeights.class,
            description = "Weights of seed-tuned, such as 0.5,0.5,50; skips the sweep.")
    PolicySettings seedWeights;

    @Option(names = "--contenders", split = ",", paramLabel = "NAME",
            description = "Contenders to run; must include predicted and seed (default: all of them).")
    List<String> contenderNames;

    @Option(names = "--out", defaultValue = "loadtest/results", paramLabel = "DIR",
            description = "Where matrix.md, matrix.json and the charts go (default: ${DEFAULT-VALUE}).")
    Path outDir;

    @Option(names = "--threads", paramLabel = "N", description = "Simulation threads, 1 to 256 (default: the cores).")
    Integer threadCount;

    @Spec
    CommandSpec command;

    Matrix() {
    }

    @Override
    public Integer call() throws Exception {
        List<ScenarioSpec> specs = new ArrayList<>();
        for (String name : scenarios == null ? SCENARIOS : scenarios) {
            specs.add(ScenarioFiles.load(name, overrides.values()));
        }
        List<Long> tuning = tuningSeeds.values();
        List<Long> heldOut = heldOutSeeds.values();
        if (tuning.stream().anyMatch(heldOut::contains)) {
            throw new IllegalArgumentException("--tuning-seeds and --held-out-seeds must not share a seed");
        }
        int threads = Compare.threads(command, threadCount);
        Path out = outDir;
        Files.createDirectories(out.resolve("matrix"));
        long started = System.nanoTime();

        PolicySettings tuned = seedWeights;
        PolicySettings settings = Compare.settings(specs.get(0));
        if (contenderNames != null) {
            // Names are checked before the sweep, which takes minutes.
            Contenders.named(contenderNames, settings, PolicySettings.DEFAULTS);
        }
        String sweepTable = "";
        if (tuned == null) {
            ProgressBar bar = new ProgressBar("sweeping seed weights on tuning seeds " + tuning,
                    Runs.units(specs, SeedSweep.grid().size(), tuning), System.err);
            SeedSweep.Result sweep = SeedSweep.run(specs, tuning, threads, bar);
            bar.finish();
            tuned = sweep.best();
            sweepTable = SeedSweep.table(sweep);
            System.err.printf(Locale.ROOT, "seed-tuned: utilisation %.2f, sessions %.2f, cap %d%n",
                    tuned.utilisationWeight(), tuned.sessionWeight(), tuned.sessionCap());
        }
        // Router settings (session cap) come from the scenarios; the matrix's scenarios share them.
        List<Contender> contenders = contenderNames == null ? Contenders.all(settings, tuned)
                : Contenders.named(contenderNames, settings, tuned);
        for (String needed : List.of(Policies.DEFAULT, "seed")) {
            if (contenders.stream().noneMatch(c -> c.name().equals(needed))) {
                throw new IllegalArgumentException("--contenders must include " + needed + " (the report compares it)");
            }
        }

        ProgressBar bar = new ProgressBar("matrix: " + specs.size() + " scenarios x " + contenders.size()
                + " contenders x " + (tuning.size() + heldOut.size()) + " seeds",
                Runs.units(specs, contenders.size(), tuning) + Runs.units(specs, contenders.size(), heldOut), System.err);
        Runs.Outcome tuningRuns = Runs.run(specs, contenders, tuning, threads, bar);
        Runs.Outcome heldOutRuns = Runs.run(specs, contenders, heldOut, threads, bar);
        bar.finish();
        double minutes = (System.nanoTime() - started) / 60e9;

        List<MatrixReport.Verdict> held = MatrixReport.verdicts(heldOutRuns, Policies.DEFAULT, "seed");
        List<MatrixReport.Verdict> tun = MatrixReport.verdicts(tuningRuns, Policies.DEFAULT, "seed");
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Scenario matrix, %s: %d scenarios, %d contenders, tuning seeds %s, "
                        + "held-out seeds %s; %.1f min on %d threads.%n%n", LocalDate.now(), specs.size(),
                contenders.size(), tuning, heldOut, minutes, threads));
        md.append("## Held-out seeds ").append(heldOut).append("\n\n").append(MatrixReport.summary(held, Policies.DEFAULT))
                .append("\n![matrix, held-out seeds](matrix/overview-held-out.png)\n\n");
        md.append("## Tuning seeds ").append(tuning).append("\n\n").append(MatrixReport.summary(tun, Policies.DEFAULT))
                .append('\n');
        if (!sweepTable.isEmpty()) {
            md.append("## Seed weight sweep (tuning seeds ").append(tuning).append(")\n\n").append(sweepTable).append('\n');
        }
        md.append("## Every contender, held-out seeds\n\n");
        for (ScenarioSpec spec : specs) {
            List<Row> rows = new ArrayList<>(heldOutRuns.rows().get(spec.name()).values());
            md.append("### ").append(spec.name()).append(": ").append(spec.summary()).append("\n\n")
                    .append(MarkdownTable.render(rows, "seed")).append('\n')
                    .append("![").append(spec.name()).append("](matrix/").append(spec.name()).append(".png)\n\n");
            ComparisonChart.write(spec.name() + ": " + spec.summary() + " (held-out seeds)", rows,
                    out.resolve("matrix").resolve(spec.name() + ".png"));
        }
        md.append("## Contenders\n\n| name | what it does |\n|---|---|\n");
        contenders.forEach(c -> md.append("| ").append(c.name()).append(" | ").append(c.summary()).append(" |\n"));
        MatrixChart.write("default policy vs best other contender and seed, held-out seeds " + heldOut, held,
                out.resolve("matrix").resolve("overview-held-out.png"));
        Files.writeString(out.resolve("matrix.md"), md.toString());
        writeJson(out.resolve("matrix.json"), tuned, tuning, heldOut, tuningRuns, heldOutRuns);
        System.out.print(md);
        System.out.println("wrote " + out.resolve("matrix.md") + ", " + out.resolve("matrix.json") + " and charts in "
                + out.resolve("matrix"));
        return 0;
    }

    private static void writeJson(Path file, PolicySettings tuned, List<Long> tuning, List<Long> heldOut,
                                  Runs.Outcome tuningRuns, Runs.Outcome heldOutRuns) throws Exception {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("date", LocalDate.now().toString());
        json.put("seedTuned", tuned);
        json.put("tuningSeeds", tuning);
        json.put("heldOutSeeds", heldOut);
        json.put("tuning", tuningRuns);
        json.put("heldOut", heldOutRuns);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
    }
}
