package io.scrouter.loadtest.trace;

import java.util.List;

/**
 * One line of a trace: what a client did at {@code atMillis} (milliseconds from the start of the trace).
 * A trace is sorted by time; for one session, its start comes first and its end last.
 */
public sealed interface TraceEvent permits TraceEvent.SessionStart, TraceEvent.Query, TraceEvent.SessionEnd {

    long atMillis();

    String session();

    /**
     * A client opens a session. {@code router} is the router instance its first request reaches (0 when
     * there is one router): placement happens there.
     */
    record SessionStart(long atMillis, String session, int router) implements TraceEvent {
    }

    /**
     * The session runs one query: {@code tasks} Spark tasks of {@code taskMillis} each, issued with the
     * Spark Connect RPCs in {@code rpcs} (in order; every one of them must reach the session's replica).
     */
    record Query(long atMillis, String session, int tasks, long taskMillis, List<String> rpcs) implements TraceEvent {

        public Query {
            if (tasks <= 0 || taskMillis <= 0) {
                throw new IllegalArgumentException("a query needs at least one task of positive duration, got tasks="
                        + tasks + " taskMillis=" + taskMillis);
            }
            rpcs = List.copyOf(rpcs);
        }

        /** Time the query takes on a replica of {@code slots} task slots with nothing else running. */
        public long aloneMillis(int slots) {
            long waves = (tasks + slots - 1) / slots;
            return waves * taskMillis;
        }
    }

    /** The client releases the session (ReleaseSession). */
    record SessionEnd(long atMillis, String session) implements TraceEvent {
    }
}
