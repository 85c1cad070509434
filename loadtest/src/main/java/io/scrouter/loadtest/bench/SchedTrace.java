package io.scrouter.loadtest.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the Linux scheduler did on the servers' core during a round ({@code bench --sched-trace}): how long the
 * target's server threads and redis-server waited for the core after being woken, and who held it while
 * redis-server waited. CPU per answer does not show this: on one core shared by the servers and Redis, an answer
 * waits for each process it passes through to get the core back.
 *
 * <p>{@code perf sched record} traces the core for the whole round (lead-in included) with the monotonic clock, the
 * one {@link System#nanoTime} reads, so that only the wake-ups of the measured part are counted. perf itself runs
 * on the client's core, as the bench does; its tracepoints still cost the traced core about a microsecond per
 * context switch, so traced rounds are slower than untraced ones and are for finding where the wait is, not for the
 * targets' figures.
 */
final class SchedTrace {

    /** A wait longer than this is one whose cause the report names (who held the core meanwhile). */
    static final double LONG_WAIT_MILLIS = 0.5;

    private static final Path PERF = Path.of("/usr/bin/perf");
    private static final long START_TIMEOUT_SECONDS = 10;

    private final Process perf;
    /** perf's own directory for this trace: its data and its output, removed once read. */
    private final Path dir;

    private SchedTrace(Process perf, Path dir) {
        this.perf = perf;
        this.dir = dir;
    }

    /** Why a trace cannot be taken on this machine, or null when it can. */
    static String unavailable() {
        if (!Files.isExecutable(PERF)) {
            return "perf is not installed (apt-get install -y linux-perf)";
        }
        if (!Files.isDirectory(Path.of("/sys/kernel/tracing/events/sched"))
                && !Files.isDirectory(Path.of("/sys/kernel/debug/tracing/events/sched"))) {
            return "the kernel's sched tracepoints are not visible (mount tracefs: mount -t tracefs nodev "
                    + "/sys/kernel/tracing)";
        }
        return null;
    }

    /** Starts tracing {@code core} for {@code seconds}. */
    static SchedTrace start(int core, long seconds) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("scrouter-sched");
        Path data = data(dir);
        Process p = new ProcessBuilder(PERF.toString(), "sched", "record", "-k", "CLOCK_MONOTONIC", "-C",
                Integer.toString(core), "-o", data.toString(), "--", "sleep", Long.toString(seconds))
                .redirectErrorStream(true).redirectOutput(log(dir).toFile()).start();
        // perf creates its data file once its buffers are open; events before that are not traced.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_TIMEOUT_SECONDS);
        while (!Files.exists(data) && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return new SchedTrace(p, dir);
    }

    private static Path data(Path dir) {
        return dir.resolve("perf.data");
    }

    private static Path log(Path dir) {
        return dir.resolve("perf.log");
    }

    /**
     * Waits for the trace to end, then counts the wake-ups of {@code servers} (all their threads) and of
     * {@code redis} (its pid; -1 for none) between {@code fromNanos} and {@code toNanos} ({@link System#nanoTime}).
     */
    Waits finish(Collection<Long> servers, long redis, long fromNanos, long toNanos)
            throws IOException, InterruptedException {
        if (!perf.waitFor(START_TIMEOUT_SECONDS + 60, TimeUnit.SECONDS)) {
            perf.destroyForcibly();
            throw new IOException("perf sched record did not end");
        }
        if (perf.exitValue() != 0) {
            throw new IOException("perf sched record failed: " + Files.readString(log(dir)).strip());
        }
        Process timehist = new ProcessBuilder(PERF.toString(), "sched", "timehist", "-i", data(dir).toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Slice> slices = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(timehist.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                Slice s = Slice.parse(line);
                if (s != null) {
                    slices.add(s);
                }
            }
        }
        timehist.waitFor();
        Files.deleteIfExists(data(dir));
        Files.deleteIfExists(log(dir));
        Files.deleteIfExists(dir);
        return Waits.of(slices, servers, redis, fromNanos / 1e9, toNanos / 1e9);
    }

    /**
     * One line of {@code perf sched timehist}: a thread ran until {@code end} (seconds) for {@code runMillis}, after
     * waiting {@code delayMillis} for the core once woken.
     */
    record Slice(double end, long pid, String name, double delayMillis, double runMillis) {

        // "  2584.066384 [0000]  scrouter-io-1-1[5384/5362]   0.000   0.000   0.314": time, cpu, comm[tid/pid],
        // wait time, sch delay, run time (perf's builtin-sched.c, timehist_print_sample).
        private static final Pattern LINE = Pattern.compile(
                "^\\s*(\\d+\\.\\d+)\\s+\\[\\d+\\]\\s+(.*?)\\[(\\d+)(?:/(\\d+))?\\]\\s+(\\d+\\.\\d+)\\s+(\\d+\\.\\d+)"
                        + "\\s+(\\d+\\.\\d+)");

        static Slice parse(String line) {
            Matcher m = LINE.matcher(line);
            if (!m.find()) {
                return null;
            }
            long pid = Long.parseLong(m.group(4) != null ? m.group(4) : m.group(3));
            return new Slice(Double.parseDouble(m.group(1)), pid, m.group(2).strip(), Double.parseDouble(m.group(6)),
                    Double.parseDouble(m.group(7)));
        }

        double start() {
            return end - runMillis / 1000;
        }

        double woken() {
            return start() - delayMillis / 1000;
        }
    }

    /**
     * The wake-to-run delays of the servers' threads and of redis-server in one round, and, over redis-server's
     * waits longer than {@link #LONG_WAIT_MILLIS}, how much of the waiting the servers held the core.
     */
    record Waits(double[] serverDelays, double[] redisDelays, double redisLongWaitMillis,
                 double redisLongWaitHeldByServersMillis) {

        static Waits of(List<Slice> slices, Collection<Long> servers, long redis, double from, double to) {
            List<Slice> measured = slices.stream().filter(s -> s.woken() >= from && s.start() <= to).toList();
            double[] server = measured.stream().filter(s -> servers.contains(s.pid()))
                    .mapToDouble(Slice::delayMillis).sorted().toArray();
            double[] red = measured.stream().filter(s -> s.pid() == redis).mapToDouble(Slice::delayMillis).sorted()
                    .toArray();
            List<Slice> byStart = new ArrayList<>(slices);
            byStart.sort(Comparator.comparingDouble(Slice::start));
            double[] starts = byStart.stream().mapToDouble(Slice::start).toArray();
            double waited = 0;
            double heldByServers = 0;
            for (Slice s : measured) {
                if (s.pid() != redis || s.delayMillis() <= LONG_WAIT_MILLIS) {
                    continue;
                }
                waited += s.delayMillis();
                heldByServers += 1000 * heldBy(byStart, starts, servers, s.woken(), s.start());
            }
            return new Waits(server, red, waited, heldByServers);
        }

        /** Seconds of {@code [from, to)} in which a thread of {@code pids} ran. */
        private static double heldBy(List<Slice> byStart, double[] starts, Collection<Long> pids, double from,
                                     double to) {
            int i = Arrays.binarySearch(starts, from);
            i = i < 0 ? -i - 1 : i;
            // One core runs one slice at a time: only the last one to start before the wait can overlap its start.
            i = Math.max(0, i - 1);
            double held = 0;
            for (; i < byStart.size() && byStart.get(i).start() < to; i++) {
                Slice s = byStart.get(i);
                double overlap = Math.min(s.end(), to) - Math.max(s.start(), from);
                if (overlap > 0 && pids.contains(s.pid())) {
                    held += overlap;
                }
            }
            return held;
        }

        /** The delay at quantile {@code q} of {@code delays} (sorted), in milliseconds; NaN when there are none. */
        static double quantile(double[] delays, double q) {
            return delays.length == 0 ? Double.NaN : delays[Math.min(delays.length - 1, (int) (q * delays.length))];
        }

        /** "p50 / p90 / p99 / max, over N wake-ups" of {@code delays}. */
        static String describe(double[] delays) {
            if (delays.length == 0) {
                return "no wake-ups";
            }
            return String.format(Locale.ROOT, "%.3f / %.3f / %.3f / %.3f ms over %,d wake-ups", quantile(delays, 0.5),
                    quantile(delays, 0.9), quantile(delays, 0.99), delays[delays.length - 1], delays.length);
        }
    }
}
