package io.scrouter.loadtest.sim;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class ReplicaQueueTest {

    /**
     * A reference FIFO scheduler written the slow, obvious way: step through time one millisecond at a time,
     * start queued tasks in order whenever a slot is free, end them after their duration.
     */
    private static final class TickingReplica {
        final int slots;
        final List<int[]> queue = new ArrayList<>(); // {job, tasks left to start, taskMillis}
        final List<long[]> running = new ArrayList<>(); // {job, ends at}
        final long[] finished;
        final int[] unfinished;

        TickingReplica(int slots, int jobs) {
            this.slots = slots;
            this.finished = new long[jobs];
            this.unfinished = new int[jobs];
        }

        void submit(int job, int tasks, int taskMillis) {
            queue.add(new int[] {job, tasks, taskMillis});
            unfinished[job] = tasks;
        }

        long[] countsAt() {
            long waiting = queue.stream().mapToLong(q -> q[1]).sum();
            return new long[] {running.size(), waiting};
        }

        void tick(long t) {
            for (int i = running.size() - 1; i >= 0; i--) {
                if (running.get(i)[1] == t) {
                    int job = (int) running.get(i)[0];
                    running.remove(i);
                    if (--unfinished[job] == 0) {
                        finished[job] = t;
                    }
                }
            }
            while (running.size() < slots && !queue.isEmpty()) {
                int[] head = queue.get(0);
                running.add(new long[] {head[0], t + head[2]});
                if (--head[1] == 0) {
                    queue.remove(0);
                }
            }
        }
    }

    @Test
    void finishingTimesAndCountsMatchAStepByStepFifoScheduler() {
        SplittableRandom random = new SplittableRandom(11);
        int jobs = 60;
        int slots = 4;
        long[] at = new long[jobs];
        int[] tasks = new int[jobs];
        int[] taskMillis = new int[jobs];
        long t = 0;
        for (int j = 0; j < jobs; j++) {
            t += random.nextInt(40);
            at[j] = t;
            tasks[j] = 1 + random.nextInt(9);
            taskMillis[j] = 1 + random.nextInt(60);
        }
        ReplicaQueue fast = new ReplicaQueue("r0", slots, 0);
        TickingReplica slow = new TickingReplica(slots, jobs);
        long[] predicted = new long[jobs];
        int next = 0;
        for (long now = 0; now < 20_000; now++) {
            while (next < jobs && at[next] == now) {
                slow.submit(next, tasks[next], taskMillis[next]);
                predicted[next] = fast.submit(new Job(next, now, tasks[next], taskMillis[next], taskMillis[next]), now);
                next++;
            }
            slow.tick(now);
            if (now % 7 == 0) {
                long[] expected = slow.countsAt();
                var sample = fast.sample(now);
                assertThat(new long[] {sample.activeTasks(), sample.pendingTasks()}).as("at %d ms", now)
                        .containsExactly(expected);
            }
        }
        assertThat(predicted).containsExactly(slow.finished);
    }

    @Test
    void aFailedReplicaLosesItsQueriesAndItsPlannedDemand() {
        ReplicaQueue r = new ReplicaQueue("r0", 2, 0);
        Job a = new Job(0, 0, 4, 100, 200);
        Job b = new Job(1, 0, 2, 100, 100);
        assertThat(r.submit(a, 0)).isEqualTo(200);
        assertThat(r.submit(b, 0)).isEqualTo(300);
        r.finished(a);
        List<Job> lost = r.fail(250);

        assertThat(lost).containsExactly(b);
        assertThat(r.alive()).isFalse();
        // Demand: a's tasks 100+100+200+200 = 600 task-ms; b's two tasks were in the system 250 ms each until
        // the death: 500. Over 2 slots and 250 ms of life: 1100 / 2 / 250 = 2.2.
        assertThat(r.meanUtilisation(1_000)).isEqualTo(2.2);
    }
}
