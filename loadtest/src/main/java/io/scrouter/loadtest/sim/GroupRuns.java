package io.scrouter.loadtest.sim;

import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs a scenario with teams on each seed twice, with one workload and one contender: as written, its routers
 * applying its {@code cluster.groups}, and without that section, every session free to go to every replica.
 * Only the groups differ between the two runs of a seed, so what differs in the teams' figures is their doing.
 */
public final class GroupRuns {

    /**
     * Each team's figures, one per seed in the order of {@code seeds}, with the scenario's groups and without.
     */
    public record Outcome(ScenarioSpec spec, String contender, List<Long> seeds,
                          Map<String, List<SimResult.Team>> withGroups,
                          Map<String, List<SimResult.Team>> withoutGroups) {
    }

    private GroupRuns() {
    }

    /** @throws IllegalArgumentException when the scenario has no teams or no groups to compare */
    public static Outcome run(ScenarioSpec spec, Contender contender, List<Long> seeds, int threads)
            throws Exception {
        if (spec.teams().isEmpty() || spec.cluster().groups().isEmpty()) {
            throw new IllegalArgumentException("scenario " + spec.name() + " needs teams and cluster.groups to compare "
                    + "with and without groups (see loadtest/scenarios/two-teams.yaml)");
        }
        ScenarioSpec without = spec.withoutGroups();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(threads, 2 * seeds.size())));
        try {
            List<Future<SimResult>> with = new ArrayList<>();
            List<Future<SimResult>> free = new ArrayList<>();
            for (long seed : seeds) {
                Workload workload = new Workload(spec, seed);
                with.add(pool.submit(() -> new Simulation(spec, workload, contender, seed).run(n -> { })));
                free.add(pool.submit(() -> new Simulation(without, workload, contender, seed).run(n -> { })));
            }
            return new Outcome(spec, contender.name(), List.copyOf(seeds), byTeam(spec, with), byTeam(spec, free));
        } finally {
            pool.shutdownNow();
        }
    }

    private static Map<String, List<SimResult.Team>> byTeam(ScenarioSpec spec, List<Future<SimResult>> runs)
            throws Exception {
        Map<String, List<SimResult.Team>> out = new LinkedHashMap<>();
        spec.teams().forEach(t -> out.put(t.name(), new ArrayList<>()));
        for (Future<SimResult> f : runs) {
            f.get().teams().forEach((team, figures) -> out.get(team).add(figures));
        }
        out.replaceAll((team, list) -> List.copyOf(list));
        return out;
    }
}
