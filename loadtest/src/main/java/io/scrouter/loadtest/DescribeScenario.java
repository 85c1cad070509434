package io.scrouter.loadtest;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Moments;
import io.scrouter.loadtest.workload.SessionPlan;
import io.scrouter.loadtest.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code loadtest scenario}: prints a scenario with every key resolved (defaults, {@code extends} and overrides
 * applied), as a file that can be edited and run, and what it offers: sessions, queries and task-slot demand.
 */
@Command(name = "scenario", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "Print a scenario with every key resolved, as a file that can be edited "
        + "and run, and the load it offers; or list the built-in scenarios.")
public final class DescribeScenario implements Callable<Integer> {

    @Option(names = "--scenario", paramLabel = "NAME|FILE", description = "A built-in scenario or a scenario file.")
    String scenario;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N",
            description = "Seed of the workload whose offered load is printed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--list", description = "List the built-in scenarios with their summaries instead.")
    boolean list;

    @Spec
    CommandSpec command;

    DescribeScenario() {
    }

    @Override
    public Integer call() {
        PrintWriter out = command.commandLine().getOut();
        if (list) {
            if (scenario != null) {
                throw new ParameterException(command.commandLine(), "give --scenario NAME|FILE or --list, not both");
            }
            for (String name : ScenarioFiles.builtIn()) {
                out.printf(Locale.ROOT, "%-22s %s%n", name, ScenarioFiles.load(name).summary());
            }
            return 0;
        }
        if (scenario == null) {
            throw new ParameterException(command.commandLine(), "give --scenario NAME|FILE, or --list for the names");
        }
        ScenarioSpec spec = ScenarioFiles.load(scenario, overrides.values());
        out.print(ScenarioFiles.toYaml(spec));
        out.print(offered(spec, new Workload(spec, seed)));
        out.flush();
        return 0;
    }

    /**
     * What the scenario offers, as YAML comments so the output stays a valid scenario file. With teams, what each
     * team offers, its sessions counted in the workload: the steady-state estimate of open sessions would miss the
     * initial sessions and crowds such scenarios are made of.
     */
    static String offered(ScenarioSpec spec, Workload w) {
        if (spec.teams().isEmpty()) {
            ScenarioSpec.Clients c = spec.clients();
            double lifetime = Moments.mean(c.lifetime()) / 1000.0;
            double open = w.rateAt(spec.durationMillis() / 2.0) * Math.min(lifetime, spec.durationMillis() / 1000.0);
            return offered("offered", spec, c, w.seed(), w.arrivals().size(), w.initialSessions(), open);
        }
        StringBuilder sb = new StringBuilder();
        long mid = spec.durationMillis() / 2;
        for (ScenarioSpec.Team team : spec.teams()) {
            long sessions = 0;
            long open = 0;
            for (Workload.Arrival a : w.arrivals()) {
                SessionPlan p = w.session(a.index());
                if (team.name().equals(p.team())) {
                    sessions++;
                    open += a.atMillis() <= mid && mid < a.atMillis() + p.lifetimeMillis() ? 1 : 0;
                }
            }
            long initial = new Workload(new ScenarioSpec(spec.name(), spec.summary(), spec.durationMillis(),
                    spec.warmupMillis(), spec.snapshotAtMillis(), team.clients(), spec.cluster()), w.seed())
                    .initialSessions();
            sb.append(offered(team.name() + " offers", spec, team.clients(), w.seed(), sessions, initial, open));
        }
        return sb.toString();
    }

    private static String offered(String what, ScenarioSpec spec, ScenarioSpec.Clients c, long seed, long sessions,
                                  long initial, double open) {
        double perSession = Moments.slotsPerSession(c);
        int slots = spec.cluster().replicas().stream().mapToInt(Integer::intValue).sum();
        return String.format(Locale.ROOT, """
                # %s (seed %d): %d sessions in all, %d open at the start; at mid-run about %.0f open
                # a query: %.1f tasks of %.0f ms on average (ordinary users); heavy users %.0f%%
                # task-slot demand of one session if answers were instant: %.2f slots; %.0f open sessions: %.0f
                # of %d slots (%.0f%%); closed-loop users offer less, since they wait for answers
                """, what, seed,
                sessions, initial, open, Moments.meanTasks(c), Moments.mean(c.taskTime()),
                c.heavy().share() * 100, perSession, open, perSession * open, slots, 100 * perSession * open / slots);
    }
}
