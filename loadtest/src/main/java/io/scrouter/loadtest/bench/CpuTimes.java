package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time as Linux's {@code /proc} counts it: of one target's server processes (every thread: the request path,
 * the JIT compilers, the collector) and of the servers' and the client's cores. Differenced over a round it says
 * what an answer cost the servers, whatever the client's own speed, and whether a core was the limit: a client
 * core near 100% busy means the client, not the server, set the round's throughput.
 *
 * <p>Process times are in clock ticks ({@code utime} and {@code stime} of {@code /proc/PID/stat}, proc(5)), which
 * the kernel reports in {@code USER_HZ}: 100 a second on x86 and arm64. The JIT's share is the same counters of the
 * processes' compiler threads ({@code /proc/PID/task/TID/stat}), differenced thread by thread: HotSpot starts and
 * stops compiler threads with demand, and a thread that ended during a round takes its CPU of that round with it
 * (undercounted), while one that started is counted whole. {@link #NONE} where {@code /proc} cannot be read
 * (not Linux): the report then says the CPU was not measured.
 *
 * <p>On a virtual machine a core's time also holds <em>steal</em>: time the hypervisor ran something else while
 * this machine had work for the core ({@code /proc/stat}'s eighth column). It counts as busy, since the core was
 * not free for the benchmark, and is kept apart ({@code serverCoreSteal}, {@code clientCoreSteal}) because it
 * slows every target by the host's load, not by its own; -1 where not read.
 */
record CpuTimes(long processTicks, long jitTicks, Map<Long, Long> jitThreads, long serverCoreBusy, long serverCoreAll,
                long clientCoreBusy, long clientCoreAll, long bystanderTicks, long serverCoreSteal,
                long clientCoreSteal) {

    static final CpuTimes NONE = new CpuTimes(-1, -1, Map.of(), -1, -1, -1, -1, -1, -1, -1);

    /** Without bystanders: no other server process was read; steal not read. */
    CpuTimes(long processTicks, long jitTicks, Map<Long, Long> jitThreads, long serverCoreBusy, long serverCoreAll,
             long clientCoreBusy, long clientCoreAll) {
        this(processTicks, jitTicks, jitThreads, serverCoreBusy, serverCoreAll, clientCoreBusy, clientCoreAll, -1);
    }

    /** Steal not read. */
    CpuTimes(long processTicks, long jitTicks, Map<Long, Long> jitThreads, long serverCoreBusy, long serverCoreAll,
             long clientCoreBusy, long clientCoreAll, long bystanderTicks) {
        this(processTicks, jitTicks, jitThreads, serverCoreBusy, serverCoreAll, clientCoreBusy, clientCoreAll,
                bystanderTicks, -1, -1);
    }

    /** HotSpot's compiler threads as {@code /proc} names them: "C1 CompilerThread0", cut to 15 characters. */
    private static final List<String> JIT_THREADS = List.of("C1 CompilerThre", "C2 CompilerThre");

    /** {@code USER_HZ}: the unit of {@code /proc/PID/stat} times. */
    static final double TICKS_PER_SECOND = 100;

    private static final double MICROS_PER_TICK = 1_000_000.0 / TICKS_PER_SECOND;

    /** The processes' CPU so far and both cores' counters now. */
    static CpuTimes read(List<Long> pids) {
        return read(pids, List.of());
    }

    /**
     * As {@link #read(List)}, and the CPU so far of {@code bystanders}: the benchmark's other server processes,
     * idle while {@code pids} are measured but sharing their core (their background work: timers, pings, pool
     * polls, the JIT and the collector).
     */
    static CpuTimes read(List<Long> pids, List<Long> bystanders) {
        try {
            long ticks = 0;
            Map<Long, Long> jit = new HashMap<>();
            for (long pid : pids) {
                Path proc = Path.of("/proc", Long.toString(pid));
                ticks += processTicks(Files.readString(proc.resolve("stat")));
                jitThreads(proc.resolve("task"), jit);
            }
            long others = 0;
            for (long pid : bystanders) {
                others += processTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
            }
            String stat = Files.readString(Path.of("/proc/stat"));
            long[] server = coreTicks(stat, Cores.SERVER_CORE);
            long[] client = coreTicks(stat, Cores.CLIENT_CORE);
            return new CpuTimes(ticks, jit.values().stream().mapToLong(Long::longValue).sum(), jit, server[0],
                    server[1], client[0], client[1], bystanders.isEmpty() ? -1 : others, server[2], client[2]);
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
    }

    boolean measured() {
        return processTicks >= 0;
    }

    CpuTimes since(CpuTimes before) {
        if (!measured() || !before.measured()) {
            return NONE;
        }
        long jit = 0;
        for (Map.Entry<Long, Long> t : jitThreads.entrySet()) {
            jit += t.getValue() - before.jitThreads.getOrDefault(t.getKey(), 0L);
        }
        return new CpuTimes(processTicks - before.processTicks, jit, Map.of(), serverCoreBusy - before.serverCoreBusy,
                serverCoreAll - before.serverCoreAll, clientCoreBusy - before.clientCoreBusy,
                clientCoreAll - before.clientCoreAll, difference(bystanderTicks, before.bystanderTicks),
                difference(serverCoreSteal, before.serverCoreSteal),
                difference(clientCoreSteal, before.clientCoreSteal));
    }

    /** {@code now - then}, or -1 if either was not read. */
    private static long difference(long now, long then) {
        return now < 0 || then < 0 ? -1 : now - then;
    }

    /** Microseconds of the processes' CPU per answer; NaN when not measured or nothing was answered. */
    double microsPerAnswer(long answered) {
        return measured() && answered > 0 ? processTicks * MICROS_PER_TICK / answered : Double.NaN;
    }

    /** Microseconds of the processes' JIT compiler threads per answer; NaN when not measured or nothing was answered. */
    double jitMicrosPerAnswer(long answered) {
        return measured() && answered > 0 ? jitTicks * MICROS_PER_TICK / answered : Double.NaN;
    }

    /** The JIT compiler threads' part of the processes' CPU; NaN when not measured or no CPU was used. */
    double jitShare() {
        return measured() && processTicks > 0 ? (double) jitTicks / processTicks : Double.NaN;
    }

    double serverCoreBusyShare() {
        return measured() && serverCoreAll > 0 ? (double) serverCoreBusy / serverCoreAll : Double.NaN;
    }

    /** The bystanders' CPU as a share of the servers' core over the same time; NaN when not read. */
    double bystanderShareOfServerCore() {
        return measured() && bystanderTicks >= 0 && serverCoreAll > 0 ? (double) bystanderTicks / serverCoreAll
                : Double.NaN;
    }

    double clientCoreBusyShare() {
        return measured() && clientCoreAll > 0 ? (double) clientCoreBusy / clientCoreAll : Double.NaN;
    }

    /** The share of the servers' core (or, with {@code client}, the client's) the host took; NaN when not read. */
    double stealShare(boolean client) {
        long steal = client ? clientCoreSteal : serverCoreSteal;
        long all = client ? clientCoreAll : serverCoreAll;
        return measured() && steal >= 0 && all > 0 ? (double) steal / all : Double.NaN;
    }

    /**
     * {@code utime + stime} of one {@code /proc/PID/stat} line. The command name (field 2) is in parentheses and may
     * hold spaces and parentheses itself, so fields are counted from the last {@code ')'}: state is field 3, utime
     * field 14, stime field 15.
     */
    static long processTicks(String statLine) {
        String[] f = statLine.substring(statLine.lastIndexOf(')') + 2).trim().split(" +");
        return Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
    }

    /** Adds each of one process's JIT compiler threads, by thread id, with its CPU ticks so far. */
    private static void jitThreads(Path tasks, Map<Long, Long> into) throws IOException {
        try (var threads = Files.list(tasks)) {
            for (Path t : (Iterable<Path>) threads::iterator) {
                String line;
                try {
                    line = Files.readString(t.resolve("stat"));
                } catch (IOException threadEnded) {
                    continue;
                }
                if (isJitThread(line)) {
                    into.put(Long.parseLong(t.getFileName().toString()), processTicks(line));
                }
            }
        }
    }

    /** True for a {@code /proc/PID/task/TID/stat} line of a HotSpot compiler thread. */
    static boolean isJitThread(String statLine) {
        String name = statLine.substring(statLine.indexOf('(') + 1, statLine.lastIndexOf(')'));
        return JIT_THREADS.stream().anyMatch(name::startsWith);
    }

    /**
     * Busy, all and steal ticks of one core from {@code /proc/stat} ({@code cpuN user nice system idle iowait irq
     * softirq steal ...}): busy is everything but idle and iowait, steal included; guest time is already inside
     * user and nice. Steal is 0 where the line has no such column.
     */
    static long[] coreTicks(String procStat, int core) {
        String prefix = "cpu" + core + " ";
        for (String line : procStat.split("\n")) {
            if (line.startsWith(prefix)) {
                String[] f = line.substring(prefix.length()).trim().split(" +");
                long all = 0;
                for (int i = 0; i < Math.min(8, f.length); i++) {
                    all += Long.parseLong(f[i]);
                }
                long idle = Long.parseLong(f[3]) + (f.length > 4 ? Long.parseLong(f[4]) : 0);
                long steal = f.length > 7 ? Long.parseLong(f[7]) : 0;
                return new long[] {all - idle, all, steal};
            }
        }
        throw new IllegalArgumentException("no line for cpu" + core + " in /proc/stat");
    }
}
