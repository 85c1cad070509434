package io.scrouter.loadtest;

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

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code loadtest compare}: one scenario (built-in or a file, with overrides), every contender or those named,
 * on the seeds given; prints the table and writes it with a chart.
 */
public final class Compare {

    static final Cli.Options OPTIONS = new Cli.Options(
            Set.of("scenario", "set", "contenders", "seeds", "out", "threads", "seed-weights"), Set.of(),
            Set.of("set"),
            "compare --scenario NAME|FILE [--set key=value ...] [--contenders random,seed,...] [--seeds 4-10] "
                    + "[--seed-weights U,S,CAP] [--out DIR] [--threads N]");

    private Compare() {
    }

    public static void main(String[] argv) {
        Cli.run("compare", argv, OPTIONS, Compare::run);
    }

    static void run(Args args) throws Exception {
        ScenarioSpec spec = ScenarioFiles.load(args.required("scenario", "NAME|FILE"), args.all("set"));
        PolicySettings settings = settings(spec);
        PolicySettings tuned = seedWeights(args.get("seed-weights", null), spec);
        List<Contender> contenders = args.get("contenders", null) == null ? Contenders.all(settings, tuned)
                : Contenders.named(args.list("contenders", List.of()), settings, tuned);
        List<Long> seeds = args.seeds("seeds", "4-10");
        int threads = (int) args.getLong("threads", Runtime.getRuntime().availableProcessors(), 1, 256);
        Path out = Path.of(args.get("out", "loadtest/results/compare"));
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
    }

    /** The router settings a scenario runs the policies with. */
    static PolicySettings settings(ScenarioSpec spec) {
        return new PolicySettings(0.9, 0.1, spec.cluster().sessionCap());
    }

    /** {@code U,S,CAP} as seed weights, or null. */
    static PolicySettings seedWeights(String text, ScenarioSpec spec) {
        if (text == null) {
            return null;
        }
        String[] p = text.split(",");
        try {
            if (p.length != 3) {
                throw new NumberFormatException();
            }
            return new PolicySettings(Double.parseDouble(p[0]), Double.parseDouble(p[1]), Long.parseLong(p[2].trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--seed-weights must be U,S,CAP such as 0.5,0.5,50, got '" + text + "'");
        }
    }
}
