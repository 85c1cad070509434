package io.scrouter.loadtest.bench;

import io.scrouter.loadtest.Args;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * The options of the process benchmarks ({@code bench}, {@code bench-profile}, {@code bench-heap-redis}), parsed
 * and checked in this one place. A wrong option ends the command with a one-line message and the usage, exit
 * status 2, never a stack trace.
 */
final class BenchCommandLine {

    static final String BENCH_USAGE = "loadtest/bin/loadtest bench [--seconds 5] [--warmup-seconds 5] [--rounds 3] [--known 2000] "
            + "[--in-flight 32] [--new-in-flight 4] [--loads known,mix,new] [--routers 1,2] "
            + "[--out loadtest/results/bench.md] [--note TEXT]";
    static final String PROFILE_USAGE = "loadtest/bin/loadtest bench-profile [--seconds 30] [--known 2000] "
            + "[--in-flight 32] [--new-in-flight 4] [--out loadtest/results/profile]";
    static final String HEAP_USAGE = "loadtest/bin/loadtest bench-heap-redis [--sessions 1000000] [--in-flight 64] "
            + "[--max-seconds 900] [--out loadtest/results/heap-redis.md]";

    static final String FLAME_GRAPH_USAGE = "loadtest/bin/loadtest flame-graph --jfr FILE.jfr --out FILE.svg "
            + "[--title TEXT]";

    private BenchCommandLine() {
    }

    /** Options of {@code bench}. {@code newInFlight} is the new-session latency load; new sessions also run at {@code inFlight}. */
    record Bench(int seconds, int warmupSeconds, int rounds, int known, int inFlight, int newInFlight, List<SessionMix> loads,
                 List<Integer> routers, Path out, String note) {
    }

    record Profile(int seconds, int known, int inFlight, int newInFlight, Path out) {
    }

    record Heap(int sessions, int inFlight, int maxSeconds, Path out) {
    }

    record FlameGraphOptions(Path jfr, Path out, String title) {
    }

    static FlameGraphOptions flameGraph(String[] argv) {
        Args a = new Args(argv, Set.of("jfr", "out", "title"), FLAME_GRAPH_USAGE);
        String jfr = a.get("jfr", "");
        String out = a.get("out", "");
        if (jfr.isEmpty() || out.isEmpty()) {
            throw new IllegalArgumentException("--jfr and --out are both needed");
        }
        if (!java.nio.file.Files.isRegularFile(Path.of(jfr))) {
            throw new IllegalArgumentException("--jfr " + jfr + ": no such file");
        }
        return new FlameGraphOptions(Path.of(jfr), Path.of(out), a.get("title", "CPU samples of " + jfr));
    }

    static Bench bench(String[] argv) {
        Args a = new Args(argv, Set.of("seconds", "warmup-seconds", "rounds", "known", "in-flight", "new-in-flight", "loads", "routers",
                "out", "note"), BENCH_USAGE);
        List<SessionMix> loads = new ArrayList<>();
        for (String name : a.get("loads", "known,mix,new").split(",")) {
            SessionMix m = switch (name.trim().toLowerCase(Locale.ROOT)) {
                case "known" -> SessionMix.KNOWN;
                case "new" -> SessionMix.NEW;
                case "mix" -> SessionMix.MIX;
                default -> throw new IllegalArgumentException("--loads takes known, new and mix, separated by commas; got '"
                        + name.trim() + "'");
            };
            if (!loads.contains(m)) {
                loads.add(m);
            }
        }
        List<Integer> routers = new ArrayList<>();
        for (String n : a.get("routers", "1,2").split(",")) {
            int r = switch (n.trim()) {
                case "1" -> 1;
                case "2" -> 2;
                default -> throw new IllegalArgumentException("--routers takes 1 and/or 2, separated by commas; got '"
                        + n.trim() + "'");
            };
            if (!routers.contains(r)) {
                routers.add(r);
            }
        }
        int seconds = bounded(a, "seconds", 5, 1, 600);
        return new Bench(seconds, bounded(a, "warmup-seconds", seconds, 1, 600), bounded(a, "rounds", 3, 1, 20),
                bounded(a, "known", 2000, 1, 1_000_000), bounded(a, "in-flight", 32, 1, 4096),
                bounded(a, "new-in-flight", 4, 1, 4096), List.copyOf(loads), List.copyOf(routers),
                Path.of(a.get("out", "loadtest/results/bench.md")), a.get("note", ""));
    }

    static Profile profile(String[] argv) {
        Args a = new Args(argv, Set.of("seconds", "known", "in-flight", "new-in-flight", "out"), PROFILE_USAGE);
        return new Profile(bounded(a, "seconds", 30, 1, 600), bounded(a, "known", 2000, 1, 1_000_000),
                bounded(a, "in-flight", 32, 1, 4096), bounded(a, "new-in-flight", 4, 1, 4096),
                Path.of(a.get("out", "loadtest/results/profile")));
    }

    static Heap heap(String[] argv) {
        Args a = new Args(argv, Set.of("sessions", "in-flight", "max-seconds", "out"), HEAP_USAGE);
        return new Heap(bounded(a, "sessions", 1_000_000, 1_000, 10_000_000), bounded(a, "in-flight", 64, 1, 4096),
                bounded(a, "max-seconds", 900, 10, 7200), Path.of(a.get("out", "loadtest/results/heap-redis.md")));
    }

    /**
     * Parses with {@code parser}; on a bad option prints what was wrong and the usage to stderr and exits with
     * status 2.
     */
    static <T> T parseOrExit(String[] argv, Function<String[], T> parser, String usage) {
        try {
            return parser.apply(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            if (!e.getMessage().contains("usage:")) {
                System.err.println("usage: " + usage);
            }
            System.exit(2);
            throw e; // not reached
        }
    }

    /** The command as typed, for the report: arguments with spaces or quotes are quoted as a shell would need them. */
    static String commandLine(String command, String[] argv) {
        StringBuilder sb = new StringBuilder(command);
        for (String a : argv) {
            sb.append(' ').append(a.matches("[A-Za-z0-9_./=,:@%+-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
        }
        return sb.toString();
    }

    private static int bounded(Args a, String key, long fallback, long min, long max) {
        long v = a.getLong(key, fallback);
        if (v < min || v > max) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "--%s must be between %d and %d, got %d", key,
                    min, max, v));
        }
        return (int) v;
    }
}
