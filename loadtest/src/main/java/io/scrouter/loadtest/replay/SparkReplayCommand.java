package io.scrouter.loadtest.replay;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.loadtest.bench.Latencies;
import io.scrouter.loadtest.trace.Replay;
import io.scrouter.loadtest.trace.TraceEvent;
import org.apache.spark.sql.connect.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
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

    /** {@code loadtest replay-spark}'s options: a trace against {@code --remote}, or the check with {@code --policies}. */
    @Command(name = "replay-spark", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
            sortOptions = false, description = {"Replay a trace with the real Spark Connect client against a Spark "
                    + "Connect address (--remote), or run the real-Spark check (--policies): its own Spark Connect "
                    + "servers, the router with each policy in turn, and a scenario's closed-loop users.",
                    "A replay exits with status 1 if a query failed."})
    public static final class Options implements Callable<Integer> {

        /** The options of replaying a trace, which the check with --policies does not take. */
        private static final List<String> REPLAY_ONLY = List.of("--remote", "--trace", "--speed", "--max-sessions",
                "--max-seconds", "--no-header");

        @Option(names = "--remote", paramLabel = "sc://HOST:PORT",
                description = "Replay: the Spark Connect address, such as an Envoy ingress in front of scrouter.")
        String remote;

        @Option(names = "--trace", paramLabel = "FILE", description = "Replay: the trace to play.")
        Path trace;

        @Option(names = "--speed", defaultValue = "10", paramLabel = "FACTOR",
                description = "Replay: how much faster than the trace's time, 0.01 to 10000 (default: ${DEFAULT-VALUE}).")
        double speed;

        @Option(names = "--max-sessions", defaultValue = "20", paramLabel = "N",
                description = "Replay: the first N sessions of the trace, each a client thread, 1 to 1000 (default: "
                        + "${DEFAULT-VALUE}).")
        long maxSessions;

        @Option(names = "--max-seconds", defaultValue = "300", paramLabel = "N",
                description = "Replay: wall-time bound, later events are left out, 1 to 86400 (default: ${DEFAULT-VALUE}).")
        double maxSeconds;

        @Option(names = "--no-header",
                description = "Replay: send the session id only in the request body, not as x-spark-session-id.")
        boolean noHeader;

        @Option(names = "--policies", split = ",", paramLabel = "POLICY",
                description = "Run the real-Spark check with these router policies, such as "
                        + "predicted,seed,fewest-sessions,random.")
        List<String> policies;

        @Option(names = "--scenario", defaultValue = "spark-burst", paramLabel = "NAME|FILE",
                description = "Check: the users' scenario (default: ${DEFAULT-VALUE}).")
        String scenario;

        @Mixin
        ScenarioOverrides overrides;

        @Option(names = "--seed", defaultValue = "1", paramLabel = "N",
                description = "Check: seed of the scenario's workload (default: ${DEFAULT-VALUE}).")
        long seed;

        @Option(names = "--spark-classpath", defaultValue = SparkServer.DEFAULT_CLASSPATH_FILE, paramLabel = "FILE",
                description = "Check: the Spark Connect server's class path, as spark-e2e/spark-server writes it "
                        + "(default: ${DEFAULT-VALUE}).")
        Path sparkClasspath;

        @Option(names = "--out", defaultValue = "loadtest/results/spark-check", paramLabel = "DIR",
                description = "Check: where the report goes (default: ${DEFAULT-VALUE}).")
        Path out;

        @Spec
        CommandSpec spec;

        public Options() {
        }

        @Override
        public Integer call() throws Exception {
            return policies != null ? check() : replay();
        }

        /** The real-Spark check: servers, router and users all started here; see {@link SparkCheck}. */
        private int check() throws Exception {
            ParseResult parsed = spec.commandLine().getParseResult();
            for (String o : REPLAY_ONLY) {
                if (parsed.hasMatchedOption(o)) {
                    throw new ParameterException(spec.commandLine(), o + " belongs to replaying a trace against "
                            + "--remote; the check with --policies starts its own servers and plays a scenario");
                }
            }
            for (String p : policies) {
                if (!Policies.NAMES.contains(p)) {
                    throw new ParameterException(spec.commandLine(), "--policies: '" + p + "' is no router policy; "
                            + "known: " + Policies.NAMES);
                }
            }
            ScenarioSpec scenarioSpec = ScenarioFiles.load(scenario, overrides.values());
            SparkCheck.run(scenarioSpec, policies, seed, sparkClasspath, out);
            return 0;
        }

        private int replay() throws Exception {
            if (remote == null || trace == null) {
                throw new ParameterException(spec.commandLine(), "give --remote sc://HOST:PORT and --trace FILE, or "
                        + "--policies for the real-Spark check");
            }
            SparkQueries.remote(remote, "00000000-0000-0000-0000-000000000000", true); // fails early on a bad address
            Bounds.within(spec, "--speed", speed, 0.01, 10_000);
            Bounds.within(spec, "--max-seconds", maxSeconds, 1, 86_400);
            List<TraceEvent> events = TraceFile.firstSessions(TraceFile.read(trace.toString(), speed, maxSeconds),
                    Bounds.within(spec, "--max-sessions", maxSessions, 1, 1000));
            int sessions = (int) TraceFile.sessions(events);
            SparkReplayCommand replay = new SparkReplayCommand(remote, !noHeader, speed, events, sessions);
            System.out.printf(Locale.ROOT, "replaying %d events of %d sessions with the Spark Connect client against "
                    + "%s at %.0fx speed (%s) ...%n", events.size(), sessions, remote, speed, replay.withHeader
                    ? "session id in the x-spark-session-id header" : "no header: session id in the body");
            long start = System.nanoTime();
            replay.play(events);
            System.out.printf(Locale.ROOT, "done in %.1f s%n%n", (System.nanoTime() - start) / 1e9);
            System.out.print(replay.report());
            return replay.errors.isEmpty() ? 0 : 1;
        }
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
