package io.scrouter.loadtest.sim;

import java.util.Arrays;
import java.util.Map;

/**
 * What one contender achieved on one scenario and seed.
 *
 * @param scenario             scenario name
 * @param contender            contender name
 * @param slowdowns            slowdown of every measured, completed query (time in system / time alone on
 *                             the largest replica), sorted
 * @param failedQueries        measured queries lost with a failed replica or sent to one
 * @param sentQueries          measured queries sent (closed-loop users send fewer when answers are slow)
 * @param utilisation          time-averaged demand of each replica over its life
 * @param sessionsAtSnapshot   sessions bound to each live replica at the scenario's snapshot time, descending
 * @param teams                the same figures for each team's sessions alone, by team name in the scenario's
 *                             order; empty in a scenario without teams
 */
public record SimResult(String scenario, String contender, double[] slowdowns, long failedQueries,
                        long sentQueries, double[] utilisation, int[] sessionsAtSnapshot, Map<String, Team> teams) {

    /** A result of a scenario without teams. */
    public SimResult(String scenario, String contender, double[] slowdowns, long failedQueries, long sentQueries,
                     double[] utilisation, int[] sessionsAtSnapshot) {
        this(scenario, contender, slowdowns, failedQueries, sentQueries, utilisation, sessionsAtSnapshot, Map.of());
    }

    /**
     * What one team's sessions met.
     *
     * @param slowdowns     slowdown of each of its measured, completed queries, sorted (as {@link #slowdowns})
     * @param failedQueries its measured queries that failed
     * @param sentQueries   its measured queries sent
     * @param placedOn      replica group → how many of its sessions were placed on a replica of that group
     *                      (every placement, the warm-up's and re-placements after a failure included)
     * @param refused       placements that found no replica its group may use (every allowed one at its cap, or
     *                      none ready); the router answers those RESOURCE_EXHAUSTED or UNAVAILABLE
     */
    public record Team(double[] slowdowns, long failedQueries, long sentQueries, Map<String, Long> placedOn,
                       long refused) {

        /** The q-quantile (0..1) of the team's slowdown, nearest-rank; NaN when none of its queries completed. */
        public double slowdown(double q) {
            return quantile(slowdowns, q);
        }
    }

    /** The q-quantile (0..1) of slowdown, nearest-rank; NaN when no query completed. */
    public double slowdown(double q) {
        return quantile(slowdowns, q);
    }

    /** Nearest-rank q-quantile of sorted values; NaN when there are none. */
    public static double quantile(double[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }

    public double maxUtilisation() {
        return Arrays.stream(utilisation).max().orElse(Double.NaN);
    }

    public double meanUtilisation() {
        return Arrays.stream(utilisation).average().orElse(Double.NaN);
    }

    public int maxSessions() {
        return sessionsAtSnapshot.length == 0 ? 0 : sessionsAtSnapshot[0];
    }

    public int minSessions() {
        return sessionsAtSnapshot.length == 0 ? 0 : sessionsAtSnapshot[sessionsAtSnapshot.length - 1];
    }

    public long completedQueries() {
        return slowdowns.length;
    }
}
