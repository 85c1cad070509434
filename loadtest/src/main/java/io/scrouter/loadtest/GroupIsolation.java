package io.scrouter.loadtest;

import io.scrouter.loadtest.report.TeamTable;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.sim.Contender;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.GroupRuns;
import io.scrouter.scorer.policy.Policies;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code loadtest groups}: a scenario with teams run with its replica groups and without them, on the same seeds
 * and workload; prints each team's slowdown both ways and, with {@code --out}, writes it as markdown headed by
 * the command that produced it.
 */
public final class GroupIsolation {

    static final Cli.Options OPTIONS = new Cli.Options(
            Set.of("scenario", "set", "contender", "seeds", "threads", "out"), Set.of(), Set.of("set"),
            "groups --scenario NAME|FILE [--set key=value ...] [--contender " + Policies.DEFAULT + "] [--seeds 1-5] "
                    + "[--threads N] [--out FILE.md]");

    /**
     * What to run, as parsed from the command line.
     *
     * @param command the command as typed, quoted into the report; null leaves it out
     * @param out     the markdown file to write; null prints only
     */
    public record Settings(String scenario, List<String> overrides, String contender, List<Long> seeds, int threads,
                           Path out, String command) {
    }

    private GroupIsolation() {
    }

    public static void main(String[] argv) {
        Cli.run("groups", argv, OPTIONS, args -> run(new Settings(args.required("scenario", "NAME|FILE"),
                args.all("set"), args.get("contender", Policies.DEFAULT), args.seeds("seeds", "1-5"),
                (int) args.getLong("threads", Runtime.getRuntime().availableProcessors(), 1, 256),
                args.get("out", null) == null ? null : Path.of(args.get("out", null)),
                commandLine(argv))));
    }

    /** The command as typed, quoted where a shell needs it (as the benchmarks quote theirs). */
    static String commandLine(String[] argv) {
        StringBuilder sb = new StringBuilder("loadtest/bin/loadtest groups");
        for (String a : argv) {
            sb.append(' ').append(a.matches("[A-Za-z0-9_./=,:@%+-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
        }
        return sb.toString();
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
