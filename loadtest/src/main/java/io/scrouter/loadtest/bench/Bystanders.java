package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The servers not measured, kept out of the measured target's way. Every target's servers share one core, and a
 * server that is not measured still works: its compiler threads finish what its last load queued (an embedded
 * router went on compiling for seconds into the next target's round), its load probes and pool polls run every
 * second. Each such burst holds the core for one to several milliseconds, and every request in flight of the
 * measured target waits it out (loadtest/README.md, "What holds two routers' slowest new sessions").
 *
 * <p>While a target warms up or is measured, the other targets' server processes run under {@code SCHED_IDLE}
 * ({@code chrt -i}): the kernel runs them only when the measured target leaves the core to them, and a measured
 * thread that wakes takes the core from them at once ({@code check_preempt_wakeup_fair} in the kernel's
 * {@code kernel/sched/fair.c}). Their work still gets done, in the core's idle time. redis-server is never lowered:
 * the Redis-backed routers wait on it, and while they are not measured it is idle anyway. A target's own processes
 * are set back to {@code SCHED_OTHER} before its warm-up and each of its rounds.
 */
final class Bystanders {

    private static final Path CHRT = Path.of("/usr/bin/chrt");

    private final boolean lowering;
    private final String why;

    private Bystanders(boolean lowering, String why) {
        this.lowering = lowering;
        this.why = why;
    }

    /**
     * Whether the servers not measured are lowered: asked for, the servers pinned to one core (unpinned, they may
     * run on a core of their own), and {@code chrt} present.
     */
    static Bystanders detect(boolean wanted, Cores cores) {
        if (!wanted) {
            return new Bystanders(false, "the servers not measured at normal priority (--bystanders normal)");
        }
        if (!cores.pinned()) {
            return new Bystanders(false, "the servers not measured at normal priority (not pinned to one core)");
        }
        if (!Files.isExecutable(CHRT)) {
            return new Bystanders(false, "the servers not measured at normal priority (chrt not found; "
                    + "apt-get install -y util-linux)");
        }
        return new Bystanders(true, "the servers not measured under SCHED_IDLE (chrt -i) while a target warms up or "
                + "is measured; redis-server never");
    }

    String describe() {
        return why;
    }

    /** What to do with each server process while {@code measured} warms up or is measured. */
    record Plan(List<Long> normal, List<Long> idle) {
    }

    /**
     * The measured processes at normal priority; every other server process (of {@code all}) idle, except
     * {@code redis}, which is left as it is.
     */
    static Plan plan(Collection<Long> measured, Collection<Long> all, long redis) {
        List<Long> normal = new ArrayList<>();
        List<Long> idle = new ArrayList<>();
        for (long pid : all) {
            if (pid == redis) {
                continue;
            }
            (measured.contains(pid) ? normal : idle).add(pid);
        }
        return new Plan(List.copyOf(normal), List.copyOf(idle));
    }

    /** Before {@code measured} warms up or is measured: it at normal priority, the other servers idle. */
    void measuring(Collection<Long> measured, ServerProcesses servers) throws IOException, InterruptedException {
        if (!lowering) {
            return;
        }
        Plan p = plan(measured, servers.pids(), servers.redis().pid());
        for (long pid : p.normal()) {
            chrt(pid, "-o");
        }
        for (long pid : p.idle()) {
            chrt(pid, "-i");
        }
    }

    /** Every server back at normal priority, as they were started: before sessions are bound, and at the end. */
    void release(ServerProcesses servers) throws IOException, InterruptedException {
        if (!lowering) {
            return;
        }
        for (long pid : plan(servers.pids(), servers.pids(), servers.redis().pid()).normal()) {
            chrt(pid, "-o");
        }
    }

    static void chrt(long pid, String policy) throws IOException, InterruptedException {
        AllThreads.run(List.of(CHRT.toString(), "-a", policy, "-p", "0", Long.toString(pid)),
                "chrt " + policy + " could not set process " + pid + "'s policy");
    }
}
