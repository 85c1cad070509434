package io.scrouter.loadtest.trace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Turns a {@link Scenario} into a trace. Deterministic: the same scenario and seed give the same trace,
 * byte for byte, so every policy in a comparison sees exactly the same clients.
 *
 * <p>Clients are open-loop: a session sends its next query a think time after the previous one was sent,
 * whether or not it has finished. That keeps the offered load identical across policies, so a slowdown
 * difference comes only from placement.
 */
public final class TraceGenerator {

    private static final int[] TASKS = {1, 2, 4, 8, 16, 32};
    private static final double[] TASK_WEIGHTS = {0.20, 0.20, 0.20, 0.20, 0.12, 0.08};

    private final Scenario scenario;
    private final SplittableRandom random;

    public TraceGenerator(Scenario scenario, long seed) {
        this.scenario = scenario;
        this.random = new SplittableRandom(seed);
    }

    public List<TraceEvent> generate() {
        List<TraceEvent> events = new ArrayList<>();
        Scenario.Traffic traffic = scenario.traffic();
        long end = scenario.durationMillis();
        // Arrivals by thinning: draw at the peak rate, keep each with probability rate(t) / peak.
        double peak = traffic.sessionsPerSecond();
        double t = 0;
        while (true) {
            t += exponential(1000.0 / peak);
            if (t >= end) {
                break;
            }
            if (random.nextDouble() < rateShare(t)) {
                addSession(events, (long) t, 2_000);
            }
        }
        Scenario.Burst burst = traffic.burst();
        if (burst != null) {
            for (int i = 0; i < burst.sessions(); i++) {
                addSession(events, burst.atMillis() + random.nextLong(burst.withinMillis()), 1_000);
            }
        }
        events.sort(Comparator.comparingLong(TraceEvent::atMillis).thenComparingInt(TraceGenerator::order));
        return events;
    }

    /** Share of the peak rate at {@code t}: 1, or a day from a quiet night (25%) to a mid-trace peak. */
    private double rateShare(double t) {
        if (!scenario.traffic().dayShaped()) {
            return 1.0;
        }
        double s = Math.sin(Math.PI * t / scenario.durationMillis());
        return 0.25 + 0.75 * s * s;
    }

    private void addSession(List<TraceEvent> events, long start, double firstQueryMeanMillis) {
        String id = sessionId();
        int router = random.nextInt(scenario.cluster().routers());
        boolean heavy = random.nextDouble() < scenario.traffic().heavyShare();
        long lifetime = (long) Math.min(30 * 60_000.0, Math.max(20_000.0, exponential(300_000)));
        long stop = Math.min(start + lifetime, scenario.durationMillis());
        events.add(new TraceEvent.SessionStart(start, id, router));
        long at = start + 1 + (long) exponential(firstQueryMeanMillis);
        boolean first = true;
        while (at < stop) {
            int tasks = heavy ? 16 + random.nextInt(17) : pickTasks();
            long taskMillis = heavy ? logNormal(800, 0.6) : logNormal(300, 0.6);
            events.add(new TraceEvent.Query(at, id, tasks, taskMillis, rpcs(first, tasks * taskMillis)));
            first = false;
            at += 1 + (long) exponential(heavy ? 8_000 : 10_000);
        }
        events.add(new TraceEvent.SessionEnd(stop, id));
    }

    /** The RPCs a Spark Connect client sends for one query, as the JVM and Python clients do. */
    private List<String> rpcs(boolean first, long workMillis) {
        List<String> rpcs = new ArrayList<>(5);
        if (first) {
            rpcs.add("Config");
        }
        rpcs.add("AnalyzePlan");
        rpcs.add("ExecutePlan");
        if (workMillis > 5_000) {
            rpcs.add("ReattachExecute"); // long results are streamed in several reattached parts
        }
        rpcs.add("ReleaseExecute");
        return rpcs;
    }

    private int pickTasks() {
        double u = random.nextDouble();
        for (int i = 0; i < TASKS.length; i++) {
            u -= TASK_WEIGHTS[i];
            if (u < 0) {
                return TASKS[i];
            }
        }
        return TASKS[TASKS.length - 1];
    }

    /** Spark Connect requires a UUID; built from the seeded generator so traces are reproducible. */
    private String sessionId() {
        long hi = (random.nextLong() & ~0xF000L) | 0x4000L;               // version 4
        long lo = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L; // IETF variant
        return new UUID(hi, lo).toString();
    }

    private double exponential(double mean) {
        return -mean * Math.log(1.0 - random.nextDouble());
    }

    private long logNormal(double median, double sigma) {
        double v = median * Math.exp(sigma * random.nextGaussian());
        return Math.max(20, Math.min(10_000, Math.round(v)));
    }

    private static int order(TraceEvent e) {
        return e instanceof TraceEvent.SessionStart ? 0 : e instanceof TraceEvent.Query ? 1 : 2;
    }
}
