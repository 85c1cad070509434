package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.scenario.ScenarioSpec;

import java.util.SplittableRandom;
import java.util.UUID;

/**
 * One user's session: who it is (drawn once) and, one call at a time, its queries and think times. Draws come
 * from the session's own random stream in a fixed order (attributes, then first-query delay, then per query:
 * its size, then the think time after it), so the sequence a policy sees does not depend on timing.
 */
public final class SessionPlan {

    private final ScenarioSpec.Clients clients;
    private final SplittableRandom random;
    private final String id;
    private final String team;
    private final int router;
    private final boolean heavy;
    private final double intensity;
    private final long lifetimeMillis;
    private final double[] cumulative;

    /**
     * A session of {@code clients} (of {@code team}, null without teams) that is heavy with probability
     * {@code heavyShare} (its crowd's, or its clients'), whose first request reaches one of {@code routers}.
     */
    SessionPlan(ScenarioSpec.Clients clients, String team, int routers, SplittableRandom random, double heavyShare) {
        this.clients = clients;
        this.team = team;
        this.random = random;
        long hi = (random.nextLong() & ~0xF000L) | 0x4000L;                         // UUID version 4
        long lo = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;  // IETF variant
        this.id = new UUID(hi, lo).toString();
        this.router = random.nextInt(routers);
        this.heavy = random.nextDouble() < heavyShare;
        this.intensity = intensity(clients.intensity(), random.nextDouble());
        this.lifetimeMillis = draw(clients.lifetime());
        this.cumulative = new double[clients.tasks().size()];
        double sum = 0;
        for (int i = 0; i < cumulative.length; i++) {
            sum += clients.tasks().get(i).weight();
            cumulative[i] = sum;
        }
    }

    /** Pareto(alpha) with minimum 1, scaled to mean 1 and capped; 1 for everyone when alpha is 0. */
    static double intensity(ScenarioSpec.Intensity in, double u) {
        if (in.alpha() == 0) {
            return 1.0;
        }
        double pareto = Math.pow(1.0 - u, -1.0 / in.alpha());
        double mean = in.alpha() / (in.alpha() - 1.0);
        return Math.min(in.max(), pareto / mean);
    }

    public String id() {
        return id;
    }

    /** The team whose group the session's requests carry; null in a scenario without teams. */
    public String team() {
        return team;
    }

    /** The router instance the session's first request reaches. */
    public int router() {
        return router;
    }

    public boolean heavy() {
        return heavy;
    }

    public double intensity() {
        return intensity;
    }

    public long lifetimeMillis() {
        return lifetimeMillis;
    }

    public long firstQueryDelayMillis() {
        return Math.round(-clients.firstQueryAfterMillis() * Math.log(1.0 - random.nextDouble()));
    }

    /** The next query's size. */
    public Query nextQuery() {
        double u = random.nextDouble() * cumulative[cumulative.length - 1];
        int k = 0;
        while (k < cumulative.length - 1 && u >= cumulative[k]) {
            k++;
        }
        int tasks = clients.tasks().get(k).tasks();
        long taskMillis = draw(clients.taskTime());
        if (heavy) {
            tasks = (int) Math.max(1, Math.round(tasks * clients.heavy().tasksScale()));
            taskMillis = Math.max(1, Math.round(taskMillis * clients.heavy().taskTimeScale()));
        }
        return new Query(tasks, taskMillis);
    }

    /** The think time before the next query: the user's draw, scaled by heavy and divided by intensity. */
    public long nextThinkMillis() {
        double think = draw(clients.think());
        if (heavy) {
            think *= clients.heavy().thinkScale();
        }
        return Math.max(1, Math.round(think / intensity));
    }

    private long draw(ScenarioSpec.Spread s) {
        double v = s.medianMillis() * Math.exp(s.sigma() * random.nextGaussian());
        return Math.max(s.minMillis(), Math.min(s.maxMillis(), Math.round(v)));
    }

    /** A query of {@code tasks} tasks of {@code taskMillis} each. */
    public record Query(int tasks, long taskMillis) {

        /** Time alone on a replica of {@code slots} slots: one wave of tasks per {@code slots} tasks. */
        public long aloneMillis(int slots) {
            return (long) ((tasks + slots - 1) / slots) * taskMillis;
        }
    }
}
