package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.scenario.ScenarioSpec;

import java.util.SplittableRandom;

/**
 * Expected values of a scenario's distributions, estimated by sampling with a fixed seed (the clipping makes
 * closed forms inexact), so a load tester can see what a scenario offers before running it.
 */
public final class Moments {

    private static final int DRAWS = 200_000;

    private Moments() {
    }

    /** Mean of a clipped log-normal, in milliseconds. */
    public static double mean(ScenarioSpec.Spread s) {
        SplittableRandom r = new SplittableRandom(1);
        double sum = 0;
        for (int i = 0; i < DRAWS; i++) {
            double v = s.medianMillis() * Math.exp(s.sigma() * r.nextGaussian());
            sum += Math.max(s.minMillis(), Math.min(s.maxMillis(), v));
        }
        return sum / DRAWS;
    }

    /** Mean of the reciprocal of a clipped log-normal, per millisecond. */
    public static double meanReciprocal(ScenarioSpec.Spread s) {
        SplittableRandom r = new SplittableRandom(2);
        double sum = 0;
        for (int i = 0; i < DRAWS; i++) {
            double v = s.medianMillis() * Math.exp(s.sigma() * r.nextGaussian());
            sum += 1.0 / Math.max(1, Math.max(s.minMillis(), Math.min(s.maxMillis(), v)));
        }
        return sum / DRAWS;
    }

    /** Mean task count of a query of an ordinary (not heavy) user. */
    public static double meanTasks(ScenarioSpec.Clients c) {
        double w = 0;
        double t = 0;
        for (ScenarioSpec.TaskWeight tw : c.tasks()) {
            w += tw.weight();
            t += tw.weight() * tw.tasks();
        }
        return t / w;
    }

    /**
     * Task-slot demand one average session offers if queries took no time (open loop): queries per second
     * times task-seconds per query, averaged over ordinary and heavy users. Closed-loop users offer less,
     * since they wait for each result.
     */
    public static double slotsPerSession(ScenarioSpec.Clients c) {
        double work = meanTasks(c) * mean(c.taskTime()) / 1000.0;
        double rate = meanReciprocal(c.think()) * 1000.0;
        ScenarioSpec.Heavy h = c.heavy();
        double heavy = work * h.tasksScale() * h.taskTimeScale() * rate / h.thinkScale();
        return (1 - h.share()) * work * rate + h.share() * heavy;
    }
}
