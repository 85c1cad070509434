package io.scrouter.loadtest;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Moments;
import io.scrouter.loadtest.workload.SessionPlan;
import io.scrouter.loadtest.workload.Workload;

import java.util.Locale;
import java.util.Set;

/**
 * {@code loadtest scenario}: prints a scenario with every key resolved (defaults, {@code extends} and overrides
 * applied), as a file that can be edited and run, and what it offers: sessions, queries and task-slot demand.
 */
public final class DescribeScenario {

    static final Cli.Options OPTIONS = new Cli.Options(Set.of("scenario", "set", "seed"), Set.of("list"), Set.of("set"),
            "scenario --scenario NAME|FILE [--set key=value ...] [--seed 1] | scenario --list");

    private DescribeScenario() {
    }

    public static void main(String[] argv) {
        Cli.run("scenario", argv, OPTIONS, args -> {
            if (args.has("list")) {
                for (String name : ScenarioFiles.builtIn()) {
                    System.out.printf(Locale.ROOT, "%-22s %s%n", name, ScenarioFiles.load(name).summary());
                }
                return;
            }
            ScenarioSpec spec = ScenarioFiles.load(args.required("scenario", "NAME|FILE"), args.all("set"));
            System.out.print(ScenarioFiles.toYaml(spec));
            System.out.print(offered(spec, new Workload(spec, args.getLong("seed", 1))));
        });
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
