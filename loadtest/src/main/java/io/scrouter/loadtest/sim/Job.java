package io.scrouter.loadtest.sim;

/** One query on one replica: {@code tasks} tasks of {@code taskMillis} each, in the replica's FIFO queue. */
final class Job {

    final int session;
    final long submittedAtMillis;
    final int tasks;
    final long taskMillis;
    final long aloneMillis;
    boolean lost;

    Job(int session, long submittedAtMillis, int tasks, long taskMillis, long aloneMillis) {
        this.session = session;
        this.submittedAtMillis = submittedAtMillis;
        this.tasks = tasks;
        this.taskMillis = taskMillis;
        this.aloneMillis = aloneMillis;
    }
}
