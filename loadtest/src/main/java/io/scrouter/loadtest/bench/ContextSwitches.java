package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Context switches of a set of processes, every thread summed, as Linux counts them per thread in
 * {@code /proc/PID/task/TID/status} (proc(5)): <em>voluntary</em> ones, where a thread blocked (an event loop
 * waiting for its sockets, a thread parking), and <em>involuntary</em> ones, where the scheduler took the core from
 * a thread that could still run (another thread woke with a better claim to the core, or the thread's slice ran
 * out). On the one core the servers and Redis share, each is a hand-over between threads; per answer they say how
 * often an answer changed hands, not what that cost. A thread that ended during a round takes its counts with it
 * (undercounted). {@link #NONE} where {@code /proc} cannot be read (not Linux).
 */
record ContextSwitches(long voluntary, long involuntary) {

    static final ContextSwitches NONE = new ContextSwitches(-1, -1);

    /** The counts so far of every thread of {@code pids}. */
    static ContextSwitches read(List<Long> pids) {
        long voluntary = 0;
        long involuntary = 0;
        try {
            for (long pid : pids) {
                try (var threads = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                    for (Path t : (Iterable<Path>) threads::iterator) {
                        String status;
                        try {
                            status = Files.readString(t.resolve("status"));
                        } catch (IOException threadEnded) {
                            continue;
                        }
                        long[] c = counts(status);
                        voluntary += c[0];
                        involuntary += c[1];
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
        return new ContextSwitches(voluntary, involuntary);
    }

    /** {@code voluntary_ctxt_switches} and {@code nonvoluntary_ctxt_switches} of one status file. */
    static long[] counts(String status) {
        long[] c = {-1, -1};
        for (String line : status.split("\n")) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                c[0] = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                c[1] = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        if (c[0] < 0 || c[1] < 0) {
            throw new IllegalArgumentException("no context switch counts in the status file");
        }
        return c;
    }

    boolean measured() {
        return voluntary >= 0;
    }

    ContextSwitches since(ContextSwitches before) {
        return measured() && before.measured()
                ? new ContextSwitches(voluntary - before.voluntary, involuntary - before.involuntary) : NONE;
    }

    /** Voluntary ({@code preempted} false) or involuntary switches per answer; NaN when not measured. */
    double perAnswer(long answered, boolean preempted) {
        return measured() && answered > 0 ? (double) (preempted ? involuntary : voluntary) / answered : Double.NaN;
    }
}
