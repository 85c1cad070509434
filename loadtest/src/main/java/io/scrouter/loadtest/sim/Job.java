package io.scrouter.loadtest.sim;

/** One query running on one replica: its tasks wait in the replica's FIFO queue and run in its slots. */
final class Job {

    final String session;
    final long arrivedAtMillis;
    final long taskMillis;
    final long aloneMillis;
    int tasksToStart;
    int tasksUnfinished;

    Job(String session, long arrivedAtMillis, int tasks, long taskMillis, long aloneMillis) {
        this.session = session;
        this.arrivedAtMillis = arrivedAtMillis;
        this.taskMillis = taskMillis;
        this.aloneMillis = aloneMillis;
        this.tasksToStart = tasks;
        this.tasksUnfinished = tasks;
    }
}
