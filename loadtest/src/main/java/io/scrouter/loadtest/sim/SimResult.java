package io.scrouter.loadtest.sim;

import java.util.Arrays;

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
 */
public record SimResult(String scenario, String contender, double[] slowdowns, long failedQueries,
                        long sentQueries, double[] utilisation, int[] sessionsAtSnapshot) {

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
