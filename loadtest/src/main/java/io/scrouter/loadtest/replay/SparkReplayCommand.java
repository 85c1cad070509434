package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.Args;
import io.scrouter.loadtest.Cli;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.loadtest.bench.Latencies;
import io.scrouter.loadtest.trace.Replay;
import io.scrouter.loadtest.trace.TraceEvent;
import org.apache.spark.sql.connect.SparkSession;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code loadtest replay-spark}: replays a trace with the real Spark Connect JVM client against a Spark
 * Connect address (an Envoy ingress in front of scrouter in production, or one server directly). Each trace
 * session is a real {@link SparkSession}; each query runs {@link SparkQueries#approximating} and collects it;
 * a session's end closes it, which sends ReleaseSession. Reports per-query latency and errors.
 *
 * <p>The client blocks while a query runs, so each session's calls run in order on a thread of their own;
 * {@code --max-sessions} bounds how many trace sessions are played, and with them the threads.
 *
 * <p>With {@code --policies} it runs the real-Spark check instead ({@link SparkCheck}): its own Spark Connect
 * servers, the router with each policy in turn, and a scenario's closed-loop users.
 */
public final class SparkReplayCommand {

    static final String USAGE = "replay-spark --remote sc://HOST:PORT --trace FILE [--speed 10] [--max-sessions 20] "
            + "[--max-seconds 300] [--no-header]";

    private final String remote;
    private final boolean withHeader;
    private final double speed;
    private final Map<String, CompletableFuture<Void>> lanes = new HashMap<>();
    private final Map<String, SparkSession> open = new ConcurrentHashMap<>();
    private final Latencies queryLatency;
    private final Latencies openLatency;
    private final AtomicLong queriesOk = new AtomicLong();
    private final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
    private final Map<String, String> firstMessage = new ConcurrentHashMap<>();
    private final ExecutorService clients;

    private SparkReplayCommand(String remote, boolean withHeader, double speed, List<TraceEvent> trace, int sessions) {
        this.remote = remote;
        this.withHeader = withHeader;
        this.speed = speed;
        this.queryLatency = new Latencies(trace.size() + 16);
        this.openLatency = new Latencies(sessions + 16);
        this.clients = Executors.newFixedThreadPool(Math.max(1, sessions));
    }

    static final Cli.Options OPTIONS = new Cli.Options(Set.of("remote", "trace", "speed", "max-sessions", "max-seconds",
            "policies", "scenario", "set", "seed", "spark-classpath", "out"), Set.of("no-header"), Set.of("set"),
            USAGE + " | replay-spark --policies predicted,seed,fewest-sessions,random [--scenario spark-burst] "
                    + "[--set key=value ...] [--seed 1] [--spark-classpath FILE] [--out loadtest/results/spark-check]");

    public static void main(String[] argv) {
        Cli.run("replay-spark", argv, OPTIONS, args -> {
            if (args.get("policies", null) != null) {
                check(args);
            } else {
                replay(args);
            }
        });
    }

    /** The real-Spark check: servers, router and users all started here; see {@link SparkCheck}. */
    private static void check(Args args) throws Exception {
        for (String o : List.of("remote", "trace", "speed", "max-sessions", "max-seconds")) {
            if (args.get(o, null) != null) {
                throw new IllegalArgumentException("--" + o + " belongs to replaying a trace against --remote; the "
                        + "check with --policies starts its own servers and plays a scenario");
            }
        }
        List<String> policies = args.list("policies", List.of());
        for (String p : policies) {
            if (!Policies.NAMES.contains(p)) {
                throw new IllegalArgumentException("--policies: '" + p + "' is no router policy; known: " + Policies.NAMES);
            }
        }
        ScenarioSpec spec = ScenarioFiles.load(args.get("scenario", "spark-burst"), args.all("set"));
        SparkCheck.run(spec, policies, args.getLong("seed", 1), Path.of(args.get("spark-classpath",
                SparkServer.DEFAULT_CLASSPATH_FILE)), Path.of(args.get("out", "loadtest/results/spark-check")));
        // The client's gRPC threads are not all daemons: leave explicitly.
        System.exit(0);
    }

    private static void replay(Args args) throws Exception {
        String remote = args.get("remote", null);
        if (remote == null) {
            throw new IllegalArgumentException("--remote sc://HOST:PORT is required (or --policies for the real-Spark "
                    + "check); usage: " + USAGE);
        }
        SparkQueries.remote(remote, "00000000-0000-0000-0000-000000000000", true); // fails early on a bad address
        double speed = args.getDouble("speed", 10);
        List<TraceEvent> trace = TraceFile.firstSessions(
                TraceFile.read(args.get("trace", null), speed, args.getDouble("max-seconds", 300)),
                args.getLong("max-sessions", 20));
        int sessions = (int) TraceFile.sessions(trace);
        SparkReplayCommand replay = new SparkReplayCommand(remote, !args.has("no-header"), speed, trace, sessions);
        System.out.printf(Locale.ROOT, "replaying %d events of %d sessions with the Spark Connect client against %s "
                + "at %.0fx speed (%s) ...%n", trace.size(), sessions, remote, speed,
                replay.withHeader ? "session id in the x-spark-session-id header" : "no header: session id in the body");
        long start = System.nanoTime();
        replay.play(trace);
        System.out.printf(Locale.ROOT, "done in %.1f s%n%n", (System.nanoTime() - start) / 1e9);
        System.out.print(replay.report());
        // The client's gRPC threads are not all daemons: leave explicitly.
        System.exit(replay.errors.isEmpty() ? 0 : 1);
    }

    private void play(List<TraceEvent> trace) throws InterruptedException {
        new Replay(speed).play(trace, e -> {
            CompletableFuture<Void> tail = lanes.getOrDefault(e.session(), CompletableFuture.completedFuture(null));
            lanes.put(e.session(), tail.thenRunAsync(() -> handle(e), clients));
        });
        try {
            CompletableFuture.allOf(lanes.values().toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
        } catch (Exception e) {
            failed("replay did not finish within 5 minutes of the trace's end", e);
        } finally {
            open.values().forEach(SparkReplayCommand::closeQuietly);
            clients.shutdownNow();
        }
    }

    private void handle(TraceEvent e) {
        try {
            if (e instanceof TraceEvent.SessionStart) {
                long t = System.nanoTime();
                SparkSession spark = SparkSession.builder().remote(SparkQueries.remote(remote, e.session(), withHeader))
                        .getOrCreate();
                open.put(e.session(), spark);
                spark.version(); // a first RPC, so the session is placed when the trace says it starts
                openLatency.add(System.nanoTime() - t);
            } else if (e instanceof TraceEvent.Query q) {
                SparkSession spark = open.get(q.session());
                if (spark == null) {
                    return; // its start failed and was counted
                }
                long t = System.nanoTime();
                spark.sql(SparkQueries.approximating(q, speed)).collect();
                queryLatency.add(System.nanoTime() - t);
                queriesOk.incrementAndGet();
            } else {
                SparkSession spark = open.remove(e.session());
                if (spark != null) {
                    spark.close();
                }
            }
        } catch (RuntimeException ex) {
            failed(e.getClass().getSimpleName(), ex);
        }
    }

    private void failed(String during, Exception ex) {
        String kind = during + ": " + ex.getClass().getSimpleName();
        errors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
        firstMessage.putIfAbsent(kind, String.valueOf(ex.getMessage()).lines().findFirst().orElse(""));
    }

    private static void closeQuietly(SparkSession spark) {
        try {
            spark.close();
        } catch (RuntimeException ignored) {
            // Already gone with its server; nothing left to release.
        }
    }

    private String report() {
        StringBuilder sb = new StringBuilder();
        sb.append("| what | count | p50 (ms) | p95 (ms) | p99 (ms) |\n|---|---:|---:|---:|---:|\n");
        row(sb, "session open (first RPC)", openLatency);
        row(sb, "query (sql + collect)", queryLatency);
        Map<String, Long> sorted = new TreeMap<>();
        errors.forEach((k, v) -> sorted.put(k, v.get()));
        sb.append(String.format(Locale.ROOT, "%nqueries completed: %d; errors: %s%n", queriesOk.get(),
                sorted.isEmpty() ? "none" : sorted));
        sorted.keySet().forEach(k -> sb.append("  ").append(k).append(" — first: ").append(firstMessage.get(k))
                .append('\n'));
        return sb.toString();
    }

    private static void row(StringBuilder sb, String what, Latencies l) {
        sb.append(String.format(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.1f |%n", what, l.count(),
                l.micros(0.50) / 1000, l.micros(0.95) / 1000, l.micros(0.99) / 1000));
    }
}
