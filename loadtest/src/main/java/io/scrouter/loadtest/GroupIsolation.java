package io.scrouter.loadtest;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.CommandText;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.cli.Seeds;
import io.scrouter.loadtest.report.TeamTable;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.sim.Contender;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.GroupRuns;
import io.scrouter.scorer.policy.Policies;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code loadtest groups}: a scenario with teams run with its replica groups and without them, on the same seeds
 * and workload; prints each team's slowdown both ways and, with {@code --out}, writes it as markdown headed by
 * the command that produced it.
 */
@Command(name = "groups", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = "Run a scenario with teams with its replica groups and without them, on the same seeds and "
                + "workload; print each team's slowdown both ways and, with --out, write it as markdown headed by the "
                + "command that produced it.")
public final class GroupIsolation implements Callable<Integer> {

    @Option(names = "--scenario", required = true, paramLabel = "NAME|FILE",
            description = "A scenario with teams and cluster.groups, such as two-teams.")
    String scenario;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--contender", defaultValue = Policies.DEFAULT, paramLabel = "NAME",
            description = "The policy both runs use (default: ${DEFAULT-VALUE}).")
    String contender;

    @Option(names = "--seeds", defaultValue = "1-5", paramLabel = "SEEDS", converter = Seeds.Value.class,
            description = "Seeds such as 1-5 or 1,2,3 (default: ${DEFAULT-VALUE}).")
    Seeds seeds;

    @Option(names = "--threads", paramLabel = "N", description = "Simulation threads, 1 to 256 (default: the cores).")
    Integer threadCount;

    @Option(names = "--out", paramLabel = "FILE.md", description = "Also write the markdown here.")
    Path out;

    @Spec
    CommandSpec command;

    /**
     * What to run, as parsed from the command line.
     *
     * @param command the command as typed, quoted into the report; null leaves it out
     * @param out     the markdown file to write; null prints only
     */
    public record Settings(String scenario, List<String> overrides, String contender, List<Long> seeds, int threads,
                           Path out, String command) {
    }

    GroupIsolation() {
    }

    @Override
    public Integer call() throws Exception {
        run(new Settings(scenario, overrides.values(), contender, seeds.values(), Compare.threads(command, threadCount),
                out, CommandText.of(command)));
        return 0;
    }

    /** Runs the comparison and prints it (and writes it to {@code settings.out()}); returns the markdown. */
    public static String run(Settings settings) throws Exception {
        ScenarioSpec spec = ScenarioFiles.load(settings.scenario(), settings.overrides());
        Contender contender = Contenders.named(List.of(settings.contender()), Compare.settings(spec), null).get(0);
        long started = System.nanoTime();
        GroupRuns.Outcome outcome = GroupRuns.run(spec, contender, settings.seeds(), settings.threads());
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "### %s: %s%n%n", spec.name(), spec.summary()));
        if (settings.command() != null) {
            md.append("```\n").append(settings.command()).append("\n```\n\n");
        }
        md.append(String.format(Locale.ROOT, "Policy %s, seeds %s, %.1f s. Slowdown: a query's time in the system over "
                        + "its time alone on the largest replica. Each figure is the median over the seeds of that "
                        + "seed's value, with the range in brackets.%n%n", contender.name(), settings.seeds(),
                (System.nanoTime() - started) / 1e9));
        md.append(TeamTable.render(outcome));
        System.out.print(md);
        if (settings.out() != null) {
            Path parent = settings.out().toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(settings.out(), md);
            System.out.println("wrote " + settings.out());
        }
        return md.toString();
    }
}
