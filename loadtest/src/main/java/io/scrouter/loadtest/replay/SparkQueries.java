package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.trace.TraceEvent;

import java.util.Locale;

/**
 * Spark SQL that makes a real Spark Connect server do roughly what a trace query describes: {@code tasks}
 * one-row partitions, each sleeping the task's duration in the executor. {@code reflect} calls a static Java
 * method from plain SQL, so no UDF (and no client-side class upload) is needed.
 */
final class SparkQueries {

    private SparkQueries() {
    }

    /** The query for {@code q}, its task time divided by the replay speed, at least 1 ms a task. */
    static String approximating(TraceEvent.Query q, double speed) {
        return sleeping(q.tasks(), Math.max(1, Math.round(q.taskMillis() / speed)));
    }

    /** {@code tasks} one-row partitions, each sleeping {@code taskMillis} in its task slot. */
    static String sleeping(int tasks, long taskMillis) {
        return String.format(Locale.ROOT,
                "SELECT id, reflect('java.lang.Thread', 'sleep', CAST(%d AS BIGINT)) FROM range(0, %d, 1, %d)",
                Math.max(1, taskMillis), tasks, tasks);
    }

    /**
     * The connection string of one session: Spark Connect's own {@code session_id}, and the same id as the
     * {@code x-spark-session-id} header the router reads, unless the header is left out to exercise the
     * router's fallback of reading the session id from the request body.
     */
    static String remote(String base, String sessionId, boolean withHeader) {
        String hostPort = base.replaceFirst("^sc://", "").replaceAll("[/;].*$", "");
        if (!hostPort.matches("[^:/]+:\\d+")) {
            throw new IllegalArgumentException("--remote must look like sc://host:port, got '" + base + "'");
        }
        return "sc://" + hostPort + "/;session_id=" + sessionId + (withHeader ? ";x-spark-session-id=" + sessionId : "");
    }
}
