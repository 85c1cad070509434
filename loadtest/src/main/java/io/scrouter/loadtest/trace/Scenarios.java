package io.scrouter.loadtest.trace;

import java.util.List;

/**
 * The named scenarios of the comparison. Sizes are chosen so the whole set simulates in about a minute on
 * two cores while each scenario still runs long enough (tens of minutes of traffic) for queues to form.
 *
 * <p>Capacity arithmetic: a normal session adds about 0.27 busy task slots (7.5 tasks of ~360 ms every
 * ~10 s), a heavy one about 3; 8 replicas of 8 slots hold 64. Rates below aim at the stated utilisation.
 */
public final class Scenarios {

    private static final long MIN = 60_000;

    public static final List<String> NAMES = List.of("steady", "burst", "skewed", "day", "multi-router", "churn");

    private Scenarios() {
    }

    public static Scenario byName(String name) {
        return switch (name) {
            case "steady" -> new Scenario("steady", "steady arrivals, ~70% busy, 1 router", 40 * MIN,
                    new Scenario.Traffic(0.56, false, 0.0, null),
                    cluster(8, 1, List.of()), 20 * MIN);
            case "burst" -> new Scenario("burst", "120 sessions start within 0.5 s over a 40% busy pool, 1 router",
                    20 * MIN, new Scenario.Traffic(0.32, false, 0.0, new Scenario.Burst(10 * MIN, 120, 500)),
                    cluster(8, 1, List.of()), 10 * MIN + 1_500);
            case "skewed" -> new Scenario("skewed", "5% of sessions ten times heavier, ~70% busy, 1 router",
                    40 * MIN, new Scenario.Traffic(0.37, false, 0.05, null),
                    cluster(8, 1, List.of()), 20 * MIN);
            case "day" -> new Scenario("day", "one compressed day: quiet night, peak ~90% busy mid-trace",
                    60 * MIN, new Scenario.Traffic(0.72, true, 0.0, null),
                    cluster(8, 1, List.of()), 30 * MIN);
            case "multi-router" -> new Scenario("multi-router",
                    "the burst spread over 4 routers, each with its own metrics snapshot", 20 * MIN,
                    new Scenario.Traffic(0.32, false, 0.0, new Scenario.Burst(10 * MIN, 120, 500)),
                    cluster(8, 4, List.of()), 10 * MIN + 1_500);
            case "churn" -> new Scenario("churn",
                    "10 replicas ~70% busy, 2 fail at once at 20 min, 2 fresh ones join 1 min later, 2 routers",
                    40 * MIN, new Scenario.Traffic(0.70, false, 0.0, null),
                    cluster(10, 2, List.of(new Scenario.Change(20 * MIN, 2, 0),
                            new Scenario.Change(21 * MIN, 0, 2))), 22 * MIN);
            default -> throw new IllegalArgumentException("unknown scenario '" + name + "'; known: " + NAMES);
        };
    }

    private static Scenario.Cluster cluster(int replicas, int routers, List<Scenario.Change> changes) {
        return new Scenario.Cluster(replicas, 8, routers, 1_000, 50, changes);
    }
}
