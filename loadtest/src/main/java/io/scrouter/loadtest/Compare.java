package io.scrouter.loadtest;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.cli.Seeds;
import io.scrouter.loadtest.report.ComparisonChart;
import io.scrouter.loadtest.report.MarkdownTable;
import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.sim.Contender;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.Runs;
import io.scrouter.scorer.policy.PolicySettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code loadtest compare}: one scenario (built-in or a file, with overrides), every contender or those named,
 * on the seeds given; prints the table and writes it with a chart.
 */
@Command(name = "compare", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = "Run one scenario (built-in or a file, with overrides) with every contender or those named, "
                + "on the seeds given; print the table and write it with a chart.")
public final class Compare implements Callable<Integer> {

    @Option(names = "--scenario", required = true, paramLabel = "NAME|FILE",
            description = "A built-in scenario (loadtest/bin/loadtest scenario --list) or a scenario file.")
    String scenario;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--contenders", split = ",", paramLabel = "NAME",
            description = "Contenders to run, such as predicted,seed,random (default: all of them).")
    List<String> contenderNames;

    @Option(names = "--seeds", defaultValue = "4-10", paramLabel = "SEEDS", converter = Seeds.Value.class,
            description = "Seeds such as 4-10 or 1,2,3 (default: ${DEFAULT-VALUE}).")
    Seeds seedList;

    @Option(names = "--seed-weights", paramLabel = "U,S,CAP", converter = SeedWeights.class,
            description = "Weights of seed-tuned: utilisation, sessions, session cap, such as 0.5,0.5,50.")
    PolicySettings seedWeights;

    @Option(names = "--out", defaultValue = "loadtest/results/compare", paramLabel = "DIR",
            description = "Where the table and chart go (default: ${DEFAULT-VALUE}).")
    Path outDir;

    @Option(names = "--threads", paramLabel = "N", description = "Simulation threads, 1 to 256 (default: the cores).")
    Integer threadCount;

    @Spec
    CommandSpec command;

    Compare() {
    }

    @Override
    public Integer call() throws Exception {
        ScenarioSpec spec = ScenarioFiles.load(scenario, overrides.values());
        PolicySettings settings = settings(spec);
        PolicySettings tuned = seedWeights;
        List<Contender> contenders = contenderNames == null ? Contenders.all(settings, tuned)
                : Contenders.named(contenderNames, settings, tuned);
        List<Long> seeds = seedList.values();
        int threads = threads(command, threadCount);
        Path out = outDir;
        Files.createDirectories(out);

        long started = System.nanoTime();
        ProgressBar bar = new ProgressBar("simulating " + spec.name(), Runs.units(List.of(spec), contenders.size(), seeds),
                System.err);
        Runs.Outcome outcome = Runs.run(List.of(spec), contenders, seeds, threads, bar);
        bar.finish();
        List<Row> rows = new ArrayList<>(outcome.rows().get(spec.name()).values());
        String md = String.format(Locale.ROOT, "### %s: %s%n%nseeds %s, %.0f s%n%n", spec.name(), spec.summary(),
                seeds, (System.nanoTime() - started) / 1e9) + MarkdownTable.render(rows, "seed");
        Files.writeString(out.resolve(spec.name() + ".md"), md);
        ComparisonChart.write(spec.name() + ": " + spec.summary(), rows, out.resolve(spec.name() + ".png"));
        System.out.print(md);
        System.out.println("wrote " + out.resolve(spec.name() + ".md") + " and " + out.resolve(spec.name() + ".png"));
        return 0;
    }

    /** {@code --threads}, or the number of cores when it is not given. */
    static int threads(CommandSpec spec, Integer given) {
        return given == null ? Runtime.getRuntime().availableProcessors()
                : Bounds.within(spec, "--threads", given, 1, 256);
    }

    /** The router settings a scenario runs the policies with. */
    static PolicySettings settings(ScenarioSpec spec) {
        return new PolicySettings(0.9, 0.1, spec.cluster().sessionCap());
    }

    /** {@code U,S,CAP} as the seed formula's weights. */
    static final class SeedWeights implements ITypeConverter<PolicySettings> {
        @Override
        public PolicySettings convert(String text) {
            String[] p = text.split(",");
            try {
                if (p.length != 3) {
                    throw new NumberFormatException();
                }
                return new PolicySettings(Double.parseDouble(p[0]), Double.parseDouble(p[1]), Long.parseLong(p[2].trim()));
            } catch (NumberFormatException e) {
                throw new TypeConversionException("give U,S,CAP such as 0.5,0.5,50, not '" + text + "'");
            }
        }
    }
}
