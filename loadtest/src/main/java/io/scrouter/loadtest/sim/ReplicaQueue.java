package io.scrouter.loadtest.sim;

import io.scrouter.scorer.LoadSample;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A Spark driver as far as load goes: {@code slots} task slots and one FIFO queue of tasks, as Spark's
 * default FIFO scheduler runs them (a later query's tasks wait behind every task of earlier ones).
 *
 * <p>Why no event per task: under FIFO with known task durations, a query never changes when an earlier
 * query's tasks start, so each task's start and end are fixed the moment its query arrives: every task, in
 * queue order, takes the slot that frees first (list scheduling, which is what the FIFO scheduler does
 * when it offers each freed slot to the head of the queue). The replica therefore computes a query's
 * finishing time on arrival and the owner schedules one event for it; the running and waiting counts that
 * Spark's REST API would report are brought up to date lazily, from heaps of pending task starts and ends.
 *
 * <p>It also integrates demand over time ((running + waiting) / slots), the utilisation the router reads
 * from Spark's REST API, so the report can say how busy each replica really was.
 */
public final class ReplicaQueue {

    private final String id;
    private final int slots;
    private final long bornAtMillis;
    /** When each slot next becomes free. */
    private final LongHeap slotFree;
    private final LongHeap starts = new LongHeap(64);
    private final LongHeap ends = new LongHeap(64);
    private final Set<Job> inFlight = new LinkedHashSet<>();
    private long running;
    private long waiting;
    private boolean alive = true;
    private long diedAtMillis = -1;
    /** Integral of demand (tasks) over time, including the planned future of tasks already queued. */
    private double taskMillisInSystem;

    ReplicaQueue(String id, int slots, long bornAtMillis) {
        this.id = id;
        this.slots = slots;
        this.bornAtMillis = bornAtMillis;
        this.slotFree = new LongHeap(slots);
        for (int i = 0; i < slots; i++) {
            slotFree.push(bornAtMillis);
        }
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

    /** Queues {@code job} at {@code now}; returns when its last task ends. */
    long submit(Job job, long now) {
        long last = now;
        for (int i = 0; i < job.tasks; i++) {
            long start = Math.max(slotFree.peek(), now);
            long end = start + job.taskMillis;
            slotFree.replaceTop(end);
            starts.push(start);
            ends.push(end);
            taskMillisInSystem += end - now;
            last = Math.max(last, end);
        }
        waiting += job.tasks;
        inFlight.add(job);
        advance(now);
        return last;
    }

    /** The job's last task ended: it leaves the replica. */
    void finished(Job job) {
        inFlight.remove(job);
    }

    /** Brings the running and waiting counts to time {@code t}. */
    private void advance(long t) {
        while (!starts.isEmpty() && starts.peek() <= t) {
            starts.pop();
            waiting--;
            running++;
        }
        while (!ends.isEmpty() && ends.peek() <= t) {
            ends.pop();
            running--;
        }
    }

    /** What Spark's REST API would report at {@code now}. */
    public LoadSample sample(long now) {
        advance(now);
        return new LoadSample(running, waiting, slots);
    }

    /** True demand over capacity at {@code now}; what the greedy-instant rule sees. */
    public double utilisation(long now) {
        advance(now);
        return (double) (running + waiting) / slots;
    }

    /** The process dies at {@code now}: every query on it is lost; returns them. */
    List<Job> fail(long now) {
        advance(now);
        // Demand planned beyond the death never happens.
        for (int i = 0; i < ends.size(); i++) {
            taskMillisInSystem -= ends.at(i) - now;
        }
        alive = false;
        diedAtMillis = now;
        starts.clear();
        ends.clear();
        running = 0;
        waiting = 0;
        List<Job> lost = List.copyOf(inFlight);
        inFlight.clear();
        return lost;
    }

    /** Time-averaged demand over the replica's life up to {@code now} (every queued task counted to its end). */
    public double meanUtilisation(long now) {
        long life = (alive ? now : diedAtMillis) - bornAtMillis;
        return life <= 0 ? 0 : taskMillisInSystem / slots / life;
    }
}
