package io.scrouter.loadtest.demo;

import io.scrouter.extproc.testing.SparkRestStandIn;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.PriorityQueue;

/**
 * A pretend Spark Connect replica for the demo: task slots and a FIFO queue run on the wall clock, and a
 * Spark REST stand-in that reports them, so the router's probes see the load its own placements create.
 */
final class LiveReplica implements AutoCloseable {

    final String id;
    final String grpcAddress;
    private final int slots;
    private final SparkRestStandIn rest;
    private final PriorityQueue<Long> runningUntil = new PriorityQueue<>();
    private final Deque<Long> waitingTaskNanos = new ArrayDeque<>();
    private int sessions;

    LiveReplica(String id, String grpcAddress, int slots) throws IOException {
        this.id = id;
        this.grpcAddress = grpcAddress;
        this.slots = slots;
        this.rest = new SparkRestStandIn().load(0, 0, slots);
    }

    String metricsUrl() {
        return rest.url();
    }

    synchronized void submit(int tasks, long taskNanos) {
        for (int i = 0; i < tasks; i++) {
            waitingTaskNanos.addLast(taskNanos);
        }
        advance(System.nanoTime());
    }

    synchronized void sessionPlaced() {
        sessions++;
    }

    synchronized int sessions() {
        return sessions;
    }

    /** Finishes due tasks, starts waiting ones, and publishes the counts on the REST stand-in. */
    synchronized void advance(long nowNanos) {
        while (!runningUntil.isEmpty() && runningUntil.peek() <= nowNanos) {
            long freedAt = runningUntil.poll();
            if (!waitingTaskNanos.isEmpty()) {
                runningUntil.add(freedAt + waitingTaskNanos.pollFirst());
            }
        }
        while (runningUntil.size() < slots && !waitingTaskNanos.isEmpty()) {
            runningUntil.add(nowNanos + waitingTaskNanos.pollFirst());
        }
        rest.load(runningUntil.size(), waitingTaskNanos.size(), slots);
    }

    synchronized double utilisation() {
        return (double) (runningUntil.size() + waitingTaskNanos.size()) / slots;
    }

    @Override
    public void close() {
        rest.close();
    }
}
