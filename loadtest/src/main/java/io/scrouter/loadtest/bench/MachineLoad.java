package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What else the machine was doing: the 1-minute load average, sampled around every round, and the processes
 * other than the benchmark's own that used the most CPU over a short window (from {@code /proc}). The figures
 * of a run on a shared machine mean little without them.
 */
final class MachineLoad {

    private final List<Double> samples = new ArrayList<>();

    /** Reads the 1-minute load average and keeps it; NaN where {@code /proc/loadavg} does not exist. */
    double sample() {
        double v;
        try {
            v = Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            v = Double.NaN;
        }
        synchronized (samples) {
            samples.add(v);
        }
        return v;
    }

    /** "min–max (median m) over n samples" of the load averages seen. */
    String summary() {
        List<Double> v;
        synchronized (samples) {
            v = samples.stream().filter(d -> !d.isNaN()).sorted().toList();
        }
        if (v.isEmpty()) {
            return "not available";
        }
        return String.format(Locale.ROOT, "%.2f–%.2f (median %.2f, %d samples, 1-minute load average)", v.get(0),
                v.get(v.size() - 1), v.get(v.size() / 2), v.size());
    }

    /**
     * The processes outside {@code ours} (and this JVM) that used the most CPU during {@code millis}, as
     * "name cpu%" (100% is one core), busiest first.
     */
    static List<String> busiestOthers(Collection<Long> ours, long millis, int top) throws InterruptedException {
        Map<Long, long[]> before = cpuTicks();
        Thread.sleep(millis);
        Map<Long, long[]> after = cpuTicks();
        long self = ProcessHandle.current().pid();
        List<Map.Entry<String, Double>> used = new ArrayList<>();
        Map<Long, String> names = names(after.keySet());
        for (Map.Entry<Long, long[]> e : after.entrySet()) {
            long[] b = before.get(e.getKey());
            if (b == null || e.getKey() == self || ours.contains(e.getKey())) {
                continue;
            }
            double pct = (e.getValue()[0] - b[0]) / CpuTimes.TICKS_PER_SECOND / (millis / 1000.0) * 100;
            if (pct >= 1) {
                used.add(Map.entry(names.getOrDefault(e.getKey(), "?"), pct));
            }
        }
        used.sort((x, y) -> Double.compare(y.getValue(), x.getValue()));
        return used.stream().limit(top).map(e -> String.format(Locale.ROOT, "%s %.0f%%", e.getKey(), e.getValue()))
                .toList();
    }

    private static Map<Long, long[]> cpuTicks() {
        Map<Long, long[]> out = new HashMap<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    out.put(Long.parseLong(p.getFileName().toString()),
                            new long[] {CpuTimes.processTicks(Files.readString(p.resolve("stat")))});
                } catch (IOException | RuntimeException gone) {
                    // The process ended between listing and reading.
                }
            });
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    /** A JVM's main class (simple name) or jar file name, from its command line: "java" alone says nothing. */
    static String javaMain(long pid) {
        try {
            String[] args = Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).split("\0");
            for (int i = 1; i < args.length; i++) {
                String a = args[i];
                if (a.equals("-jar") && i + 1 < args.length) {
                    return Path.of(args[i + 1]).getFileName().toString();
                }
                if (a.equals("-cp") || a.equals("-classpath") || a.equals("--class-path") || a.equals("-p")
                        || a.equals("--module-path") || a.equals("--add-opens") || a.equals("--add-exports")) {
                    i++;
                } else if (!a.startsWith("-")) {
                    return a.substring(a.lastIndexOf('.') + 1);
                }
            }
        } catch (IOException | RuntimeException gone) {
            // ended, or not readable
        }
        return "";
    }

    private static Map<Long, String> names(Collection<Long> pids) {
        Map<Long, String> out = new HashMap<>();
        for (long pid : pids) {
            try {
                String comm = Files.readString(Path.of("/proc", Long.toString(pid), "comm")).trim();
                out.put(pid, comm.equals("java") ? "java " + javaMain(pid) : comm);
            } catch (IOException gone) {
                // ended
            }
        }
        return out;
    }
}
