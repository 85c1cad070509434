package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.scenario.ScenarioSpec;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The clients of a scenario for one seed: when each session arrives, and each session's own plan.
 *
 * <p>Deterministic, and the same for every placement policy: arrivals come from one random stream of the
 * seed, and each session draws its attributes, query sizes and think times from a stream of its own
 * (seed and arrival index). So with closed-loop users, where <em>when</em> a query is sent depends on how fast
 * the previous one finished, every policy still faces the same users asking the same queries in the same order.
 *
 * <p>In a scenario with teams, each team's arrivals and each of its sessions' draws come from streams of that
 * team's own (seed, the team's position in the file, and the session's index within the team), so changing one
 * team's clients leaves every other team's sessions exactly as they were.
 */
public final class Workload {

    /** Session {@code index} opens at {@code atMillis}. */
    public record Arrival(long atMillis, int index) {
    }

    private final ScenarioSpec spec;
    private final long seed;
    private final List<Arrival> arrivals;
    /** Session index → the heavy share of the crowd it arrives in, for crowds that set their own. */
    private final java.util.Map<Integer, Double> heavyShareOf = new java.util.HashMap<>();
    /** Session index → its team's position in {@code spec.teams()}; empty without teams. */
    private final List<Integer> teamOf = new ArrayList<>();
    /** Session index → its index among its team's sessions; empty without teams. */
    private final List<Integer> indexInTeam = new ArrayList<>();

    public Workload(ScenarioSpec spec, long seed) {
        this.spec = spec;
        this.seed = seed;
        this.arrivals = generateArrivals();
    }

    public ScenarioSpec spec() {
        return spec;
    }

    public long seed() {
        return seed;
    }

    /** Every arrival, by time (then index). */
    public List<Arrival> arrivals() {
        return arrivals;
    }

    /** The plan of session {@code index}; a fresh plan replays the same draws from the start. */
    public SessionPlan session(int index) {
        if (teamOf.isEmpty()) {
            return new SessionPlan(spec.clients(), null, spec.cluster().routers(), planRandom(seed, index),
                    heavyShareOf.getOrDefault(index, spec.clients().heavy().share()));
        }
        int t = teamOf.get(index);
        ScenarioSpec.Team team = spec.teams().get(t);
        return new SessionPlan(team.clients(), team.name(), spec.cluster().routers(),
                planRandom(teamSeed(t), indexInTeam.get(index)),
                heavyShareOf.getOrDefault(index, team.clients().heavy().share()));
    }

    private static SplittableRandom planRandom(long seed, int index) {
        return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 1_000_003L * index + 17);
    }

    /** The seed of the team at position {@code t}: its arrivals and its sessions' streams derive from it. */
    private long teamSeed(int t) {
        return seed ^ 0xC2B2AE3D27D4EB4FL * (t + 1);
    }

    /** Arrival rate of new sessions per second at {@code t} (of {@code clients}, the teams' shared part). */
    public double rateAt(double t) {
        return rateAt(spec.clients(), t);
    }

    private double rateAt(ScenarioSpec.Clients c, double t) {
        if (!c.profile().isEmpty()) {
            double rate = 0;
            for (ScenarioSpec.RateStep step : c.profile()) {
                if (step.fromMillis() <= t) {
                    rate = step.sessionsPerSecond();
                }
            }
            return rate;
        }
        if (c.dayCycle()) {
            double s = Math.sin(Math.PI * t / spec.durationMillis());
            return c.sessionsPerSecond() * (c.nightShare() + (1 - c.nightShare()) * s * s);
        }
        return c.sessionsPerSecond();
    }

    private static double peakRate(ScenarioSpec.Clients c) {
        if (!c.profile().isEmpty()) {
            return c.profile().stream().mapToDouble(ScenarioSpec.RateStep::sessionsPerSecond).max().orElse(0);
        }
        return c.sessionsPerSecond();
    }

    /** Sessions open at the start in steady state: rate × mean lifetime, unless the file sets a number. */
    public long initialSessions() {
        return initialSessions(spec.clients());
    }

    private long initialSessions(ScenarioSpec.Clients c) {
        long set = c.initialSessions();
        if (set >= 0) {
            return set;
        }
        return Math.round(rateAt(c, 0) * Moments.mean(c.lifetime()) / 1000.0);
    }

    private List<Arrival> generateArrivals() {
        List<Arrival> out = new ArrayList<>();
        if (spec.teams().isEmpty()) {
            arrivals(spec.clients(), new SplittableRandom(seed), out);
        }
        for (int t = 0; t < spec.teams().size(); t++) {
            int first = out.size();
            arrivals(spec.teams().get(t).clients(), new SplittableRandom(teamSeed(t)), out);
            for (int i = first; i < out.size(); i++) {
                teamOf.add(t);
                indexInTeam.add(i - first);
            }
        }
        out.sort(Comparator.comparingLong(Arrival::atMillis).thenComparingInt(Arrival::index));
        return List.copyOf(out);
    }

    /** The sessions of {@code c}, indexed on from those already in {@code out}. */
    private void arrivals(ScenarioSpec.Clients c, SplittableRandom random, List<Arrival> out) {
        int index = out.size();
        long initial = initialSessions(c);
        long warmup = Math.max(1, spec.warmupMillis());
        for (long i = 0; i < initial; i++) {
            out.add(new Arrival(random.nextLong(warmup), index++));
        }
        double peak = peakRate(c);
        if (peak > 0) {
            // Thinning: candidates at the peak rate, each kept with probability rate(t) / peak.
            double t = 0;
            while (true) {
                t += -1000.0 / peak * Math.log(1.0 - random.nextDouble());
                if (t >= spec.durationMillis()) {
                    break;
                }
                if (random.nextDouble() * peak < rateAt(c, t)) {
                    out.add(new Arrival((long) t, index++));
                }
            }
        }
        for (ScenarioSpec.Burst b : c.bursts()) {
            for (int i = 0; i < b.sessions(); i++) {
                if (!Double.isNaN(b.heavyShare())) {
                    heavyShareOf.put(index, b.heavyShare());
                }
                out.add(new Arrival(b.atMillis() + random.nextLong(b.overMillis()), index++));
            }
        }
    }
}
