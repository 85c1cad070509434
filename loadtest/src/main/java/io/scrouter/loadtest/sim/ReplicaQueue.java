package io.scrouter.loadtest.sim;

import io.scrouter.scorer.LoadSample;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A Spark driver as far as load goes: {@code slots} task slots and one FIFO queue of tasks, as Spark's
 * default FIFO scheduler runs them (a later query's tasks wait behind every task of earlier ones). Time is
 * always an argument; the owner schedules task ends and calls {@link #taskEnded}.
 *
 * <p>It also integrates demand over time ((running + waiting) / slots), the same utilisation the router
 * reads from Spark's REST API, so the report can say how busy each replica really was.
 */
public final class ReplicaQueue {

    /** Told when a task starts (to schedule its end) and when a query's last task ends. */
    interface Listener {
        void taskStarted(ReplicaQueue replica, Job job, long endsAtMillis);

        void jobFinished(ReplicaQueue replica, Job job, long atMillis);
    }

    private final String id;
    private final int slots;
    private final Listener listener;
    private final Deque<Job> waiting = new ArrayDeque<>();
    private final long bornAtMillis;
    private int running;
    private int jobsInFlight;
    private long waitingTasks;
    private boolean alive = true;
    private long diedAtMillis = -1;
    private double demandArea;
    private long lastChangeMillis;

    ReplicaQueue(String id, int slots, long bornAtMillis, Listener listener) {
        this.id = id;
        this.slots = slots;
        this.listener = listener;
        this.bornAtMillis = bornAtMillis;
        this.lastChangeMillis = bornAtMillis;
    }

    public String id() {
        return id;
    }

    public int slots() {
        return slots;
    }

    public boolean alive() {
        return alive;
    }

    void submit(Job job, long now) {
        account(now);
        jobsInFlight++;
        waiting.addLast(job);
        waitingTasks += job.tasksToStart;
        fill(now);
    }

    void taskEnded(Job job, long now) {
        if (!alive) {
            return;
        }
        account(now);
        running--;
        if (--job.tasksUnfinished == 0) {
            jobsInFlight--;
            listener.jobFinished(this, job, now);
        }
        fill(now);
    }

    private void fill(long now) {
        while (running < slots && !waiting.isEmpty()) {
            Job head = waiting.peekFirst();
            head.tasksToStart--;
            waitingTasks--;
            running++;
            if (head.tasksToStart == 0) {
                waiting.pollFirst();
            }
            listener.taskStarted(this, head, now + head.taskMillis);
        }
    }

    /** What Spark's REST API would report now. */
    public LoadSample sample() {
        return new LoadSample(running, waitingTasks, slots);
    }

    /** True demand over capacity now; what an oracle would see. */
    public double utilisation() {
        return (double) (running + waitingTasks) / slots;
    }

    /** The process dies: every query on it is lost. Returns how many queries were lost (running or waiting). */
    int fail(long now) {
        account(now);
        alive = false;
        diedAtMillis = now;
        waiting.clear();
        running = 0;
        waitingTasks = 0;
        int lost = jobsInFlight;
        jobsInFlight = 0;
        return lost;
    }

    /** Time-averaged demand over the replica's life up to {@code now}. */
    public double meanUtilisation(long now) {
        long end = alive ? now : diedAtMillis;
        double area = demandArea + (alive ? (double) (running + waitingTasks) / slots * (now - lastChangeMillis) : 0);
        long life = end - bornAtMillis;
        return life <= 0 ? 0 : area / life;
    }

    private void account(long now) {
        demandArea += (double) (running + waitingTasks) / slots * (now - lastChangeMillis);
        lastChangeMillis = now;
    }
}
