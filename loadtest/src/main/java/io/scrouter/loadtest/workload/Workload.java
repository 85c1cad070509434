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
        return new SessionPlan(spec, new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 1_000_003L * index + 17),
                heavyShareOf.getOrDefault(index, spec.clients().heavy().share()));
    }

    /** Arrival rate of new sessions per second at {@code t}. */
    public double rateAt(double t) {
        ScenarioSpec.Clients c = spec.clients();
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

    private double peakRate() {
        ScenarioSpec.Clients c = spec.clients();
        if (!c.profile().isEmpty()) {
            return c.profile().stream().mapToDouble(ScenarioSpec.RateStep::sessionsPerSecond).max().orElse(0);
        }
        return c.sessionsPerSecond();
    }

    /** Sessions open at the start in steady state: rate × mean lifetime, unless the file sets a number. */
    public long initialSessions() {
        long set = spec.clients().initialSessions();
        if (set >= 0) {
            return set;
        }
        return Math.round(rateAt(0) * Moments.mean(spec.clients().lifetime()) / 1000.0);
    }

    private List<Arrival> generateArrivals() {
        SplittableRandom random = new SplittableRandom(seed);
        List<Arrival> out = new ArrayList<>();
        int index = 0;
        long initial = initialSessions();
        long warmup = Math.max(1, spec.warmupMillis());
        for (long i = 0; i < initial; i++) {
            out.add(new Arrival(random.nextLong(warmup), index++));
        }
        double peak = peakRate();
        if (peak > 0) {
            // Thinning: candidates at the peak rate, each kept with probability rate(t) / peak.
            double t = 0;
            while (true) {
                t += -1000.0 / peak * Math.log(1.0 - random.nextDouble());
                if (t >= spec.durationMillis()) {
                    break;
                }
                if (random.nextDouble() * peak < rateAt(t)) {
                    out.add(new Arrival((long) t, index++));
                }
            }
        }
        for (ScenarioSpec.Burst b : spec.clients().bursts()) {
            for (int i = 0; i < b.sessions(); i++) {
                if (!Double.isNaN(b.heavyShare())) {
                    heavyShareOf.put(index, b.heavyShare());
                }
                out.add(new Arrival(b.atMillis() + random.nextLong(b.overMillis()), index++));
            }
        }
        out.sort(Comparator.comparingLong(Arrival::atMillis).thenComparingInt(Arrival::index));
        return List.copyOf(out);
    }
}
