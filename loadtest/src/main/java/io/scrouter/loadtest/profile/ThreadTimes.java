package io.scrouter.loadtest.profile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * CPU time and context switches of every thread of a process, from {@code /proc/<pid>/task}: two readings
 * around a load give, per thread group, the CPU each request cost and how often that group's threads were
 * woken (a voluntary switch is a thread going to sleep to wait for work; each request handed from one thread
 * to another wakes the receiver). Threads are grouped by name with trailing numbers removed
 * ({@code redisson-netty-1-3} and {@code redisson-netty-1-4} are one group); the kernel keeps 15 characters of
 * a Java thread's name.
 */
public record ThreadTimes(Map<Long, Sample> threads) {

    /** One thread's counters. */
    public record Sample(String group, long cpuNanos, long voluntarySwitches, long involuntarySwitches) {
    }

    /** Per group: CPU nanoseconds, voluntary and involuntary switches, threads seen. */
    public record Group(long cpuNanos, long voluntarySwitches, long involuntarySwitches, int threads) {
    }

    public static ThreadTimes read(long pid) throws IOException {
        Map<Long, Sample> threads = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String comm = Files.readString(task.resolve("comm")).trim();
                    long cpu = Long.parseLong(Files.readString(task.resolve("schedstat")).trim().split("\\s+")[0]);
                    long vol = 0;
                    long invol = 0;
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            vol = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            invol = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                    threads.put(Long.parseLong(task.getFileName().toString()), new Sample(group(comm), cpu, vol, invol));
                } catch (IOException | RuntimeException ended) {
                    // The thread ended between listing and reading.
                }
            }
        }
        return new ThreadTimes(threads);
    }

    /** A thread name without its trailing counters: {@code GC Thread#1} → {@code GC Thread}. */
    static String group(String name) {
        String g = name;
        String before;
        do {
            before = g;
            g = g.replaceAll("[-#_ ]?\\d+$", "");
        } while (!g.equals(before) && !g.isEmpty());
        g = g.replaceAll("[-#_ ]+$", "");
        return g.isEmpty() ? name : g;
    }

    /** What each group did between {@code before} and this reading (threads started meanwhile count in full). */
    public Map<String, Group> since(ThreadTimes before) {
        Map<String, Group> out = new TreeMap<>();
        threads.forEach((tid, now) -> {
            Sample then = before.threads.get(tid);
            long cpu = now.cpuNanos - (then == null ? 0 : then.cpuNanos);
            long vol = now.voluntarySwitches - (then == null ? 0 : then.voluntarySwitches);
            long invol = now.involuntarySwitches - (then == null ? 0 : then.involuntarySwitches);
            out.merge(now.group, new Group(cpu, vol, invol, 1), (a, b) -> new Group(a.cpuNanos + b.cpuNanos,
                    a.voluntarySwitches + b.voluntarySwitches, a.involuntarySwitches + b.involuntarySwitches,
                    a.threads + b.threads));
        });
        return out;
    }
}
