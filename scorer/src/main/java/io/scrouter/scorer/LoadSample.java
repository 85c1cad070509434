package io.scrouter.scorer;

/**
 * One reading of a replica's task load, as Spark's monitoring REST API reports it.
 *
 * @param activeTasks  tasks running now, summed over active executors
 * @param pendingTasks tasks of active stages that wait for a slot
 * @param maxTasks     task slots, summed over active executors
 */
public record LoadSample(long activeTasks, long pendingTasks, long maxTasks) {

    public LoadSample {
        if (activeTasks < 0 || pendingTasks < 0 || maxTasks < 0) {
            throw new IllegalArgumentException("task counts must not be negative, got active=" + activeTasks
                    + " pending=" + pendingTasks + " maxTasks=" + maxTasks);
        }
    }

    /**
     * Demand over capacity: {@code (active + pending) / maxTasks}. Above 1 means work is queued. A replica
     * with no slots at all (executors lost, or not yet allocated) cannot run anything, so it reads as full
     * plus whatever it already holds, never as idle.
     */
    public double utilisation() {
        long demand = activeTasks + pendingTasks;
        if (maxTasks == 0) {
            return 1.0 + demand;
        }
        return (double) demand / maxTasks;
    }
}
