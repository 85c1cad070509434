package io.scrouter.loadtest.replay;

import io.scrouter.scorer.LoadSample;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.PriorityQueue;

/**
 * A pretend Spark Connect replica: task slots and one FIFO task queue run on the wall clock (Spark's default
 * scheduler: a later query's tasks wait behind every task of earlier ones), and a Spark REST endpoint that
 * reports them, so a router's probes see the load its own placements create.
 *
 * <p>Task ends are computed from their scheduled times, not from when {@link #advance} happens to run, so a
 * query's completion time does not depend on the ticker's granularity. It also integrates demand
 * ((running + waiting) / slots) over time, the utilisation the router reads, for the report.
 */
public final class LiveReplica implements AutoCloseable {

    /** Told when a query's last task ends. Called under the replica's lock: keep it short. */
    public interface QueryDone {
        void finished(long atNanos);
    }

    private static final class Query {
        final long taskNanos;
        final QueryDone done;
        int tasksToStart;
        int tasksUnfinished;

        Query(int tasks, long taskNanos, QueryDone done) {
            this.taskNanos = taskNanos;
            this.done = done;
            this.tasksToStart = tasks;
            this.tasksUnfinished = tasks;
        }
    }

    private record RunningTask(long endsAtNanos, Query query) {
    }

    private final String id;
    private final String grpcAddress;
    private final int slots;
    private final SparkRestEndpoint rest;
    private final PriorityQueue<RunningTask> running =
            new PriorityQueue<>((a, b) -> Long.compare(a.endsAtNanos, b.endsAtNanos));
    private final Deque<Query> waiting = new ArrayDeque<>();
    private final long bornAtNanos;
    private long waitingTasks;
    private int sessions;
    private double demandAreaNanos;
    private long lastChangeNanos;

    /** {@code restPort} 0 picks a free port; a fixed one lets a static pool name the metrics URL in advance. */
    public LiveReplica(String id, String grpcAddress, int slots, int restPort) throws IOException {
        this.id = id;
        this.grpcAddress = grpcAddress;
        this.slots = slots;
        this.bornAtNanos = System.nanoTime();
        this.lastChangeNanos = bornAtNanos;
        this.rest = new SparkRestEndpoint(restPort, this::sample);
    }

    public String id() {
        return id;
    }

    public String grpcAddress() {
        return grpcAddress;
    }

    public int slots() {
        return slots;
    }

    public String metricsUrl() {
        return rest.url();
    }

    /** How many times a router has read this replica's executors, i.e. probed it. */
    public long probes() {
        return rest.probes();
    }

    public synchronized void submit(int tasks, long taskNanos) {
        submit(tasks, taskNanos, null);
    }

    /** Queues a query of {@code tasks} tasks of {@code taskNanos} each; {@code done} hears of its end. */
    public synchronized void submit(int tasks, long taskNanos, QueryDone done) {
        long now = System.nanoTime();
        advance(now);
        account(now);
        waiting.addLast(new Query(tasks, taskNanos, done));
        waitingTasks += tasks;
        startWaiting(now);
    }

    public synchronized void sessionPlaced() {
        sessions++;
    }

    public synchronized void sessionEnded() {
        sessions = Math.max(0, sessions - 1);
    }

    public synchronized int sessions() {
        return sessions;
    }

    /** Finishes the tasks due by {@code nowNanos}, each freeing its slot for the next waiting task at its end time. */
    public synchronized void advance(long nowNanos) {
        while (!running.isEmpty() && running.peek().endsAtNanos() <= nowNanos) {
            account(running.peek().endsAtNanos());
            RunningTask t = running.poll();
            if (--t.query().tasksUnfinished == 0 && t.query().done != null) {
                t.query().done.finished(t.endsAtNanos());
            }
            startWaiting(t.endsAtNanos());
        }
    }

    private void startWaiting(long atNanos) {
        while (running.size() < slots && !waiting.isEmpty()) {
            Query head = waiting.peekFirst();
            if (--head.tasksToStart == 0) {
                waiting.pollFirst();
            }
            waitingTasks--;
            running.add(new RunningTask(atNanos + head.taskNanos, head));
        }
    }

    /** What Spark's REST API reports now. */
    public synchronized LoadSample sample() {
        advance(System.nanoTime());
        return new LoadSample(running.size(), waitingTasks, slots);
    }

    /** Demand over capacity now: (running + waiting tasks) / slots. */
    public synchronized double utilisation() {
        return (double) (running.size() + waitingTasks) / slots;
    }

    /** Time-averaged demand since the replica started, up to {@code nowNanos}. */
    public synchronized double meanUtilisation(long nowNanos) {
        advance(nowNanos);
        double area = demandAreaNanos + utilisation() * (nowNanos - lastChangeNanos);
        long life = nowNanos - bornAtNanos;
        return life <= 0 ? 0 : area / life;
    }

    private void account(long atNanos) {
        if (atNanos > lastChangeNanos) {
            demandAreaNanos += utilisation() * (atNanos - lastChangeNanos);
            lastChangeNanos = atNanos;
        }
    }

    @Override
    public void close() {
        rest.close();
    }
}
