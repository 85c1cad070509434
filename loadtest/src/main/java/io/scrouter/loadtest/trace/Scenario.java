package io.scrouter.loadtest.trace;

import java.util.List;

/**
 * A named situation to compare placement in: the traffic (what {@link TraceGenerator} produces) and the
 * cluster it runs on (replicas, routers, metrics timing, replicas failing and joining).
 *
 * @param name            short name used on the command line and in file names
 * @param summary         one line for tables and charts
 * @param durationMillis  length of the traffic
 * @param traffic         the shape of session arrivals and work
 * @param cluster         the replicas and routers the traffic runs on
 * @param snapshotAtMillis when sessions per replica are counted for the report (just after a burst)
 */
public record Scenario(String name, String summary, long durationMillis, Traffic traffic, Cluster cluster,
                       long snapshotAtMillis) {

    /**
     * How sessions arrive and what they do.
     *
     * @param sessionsPerSecond mean arrival rate of new sessions at the daily peak (or always, when not day-shaped)
     * @param dayShaped         the rate follows one compressed day: a quiet night, a peak mid-trace
     * @param heavyShare        fraction of sessions that are very heavy (about ten times a normal one)
     * @param burst             a crowd of sessions that all start inside one metrics-poll interval, or null
     */
    public record Traffic(double sessionsPerSecond, boolean dayShaped, double heavyShare, Burst burst) {
    }

    /** {@code sessions} new sessions starting within {@code withinMillis} from {@code atMillis}. */
    public record Burst(long atMillis, int sessions, long withinMillis) {
    }

    /**
     * @param replicas         replicas at the start, named r0, r1, …
     * @param slots            task slots per replica (Spark's maxTasks)
     * @param routers          router instances; sessions start on one of them at random
     * @param pollMillis       load probe and pool poll interval of every router
     * @param storeDelayMillis how long a session count read from the shared store takes to arrive
     * @param changes          replicas failing and joining, in time order
     */
    public record Cluster(int replicas, int slots, int routers, long pollMillis, long storeDelayMillis,
                          List<Change> changes) {

        public Cluster {
            changes = List.copyOf(changes);
        }
    }

    /** At {@code atMillis}, {@code fail} replicas die at once and {@code join} new, empty ones become ready. */
    public record Change(long atMillis, int fail, int join) {
    }
}
