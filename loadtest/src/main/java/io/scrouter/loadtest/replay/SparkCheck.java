package io.scrouter.loadtest.replay;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.loadtest.report.ProgressBar;
import io.scrouter.loadtest.report.Row;
import io.scrouter.loadtest.report.SparkCheckChart;
import io.scrouter.loadtest.scenario.DurationText;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.sim.Contenders;
import io.scrouter.loadtest.sim.Runs;
import io.scrouter.loadtest.sim.SimResult;
import io.scrouter.loadtest.workload.SessionPlan;
import io.scrouter.loadtest.workload.Workload;
import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.policy.PolicySettings;
import io.scrouter.scorer.probe.SparkRestProbe;
import org.apache.spark.sql.connect.SparkSession;

import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real-Spark check: real Spark Connect servers (one per replica of the scenario, {@code local[slots]}),
 * the real router (one {@link RouterServer} per policy, in-memory store, static pool, real probes of Spark's
 * REST API) behind an Envoy stand-in, and the scenario's users played with the real Spark Connect client:
 * each session opens a {@link SparkSession}, waits for each query's result, thinks, and sends the next, for
 * its lifetime. The users, query sizes and think times are the simulator's for the same scenario and seed.
 *
 * <p>Why tasks sleep: on one small machine the servers share the CPU, so CPU-bound tasks would make every
 * replica as slow as the busiest. Each task runs {@code reflect('java.lang.Thread', 'sleep', ms)}, so a task
 * occupies one of its server's task slots for its duration while using almost no CPU: each server's slots are
 * its own capacity, as on separate machines.
 */
final class SparkCheck {

    /** One policy's run. */
    record Outcome(String policy, double[] latenciesMs, double[] slowdowns, Map<String, Integer> sessionsPerReplica,
                   Map<String, Double> meanDemand, long queries, long errors, int moved, String firstError,
                   String machineLoad)
            implements SparkCheckChart.Run {

        @Override
        public double latency(double q) {
            return SimResult.quantile(latenciesMs, q);
        }

        double slowdown(double q) {
            return SimResult.quantile(slowdowns, q);
        }
    }

    private final ScenarioSpec spec;
    private final long seed;
    private final List<SparkServer> servers;
    private volatile String serverVersion = "?";
    private double idleQueryMillis = Double.NaN;

    private SparkCheck(ScenarioSpec spec, long seed, List<SparkServer> servers) {
        this.spec = spec;
        this.seed = seed;
        this.servers = servers;
    }

    static void run(ScenarioSpec spec, List<String> policies, long seed, Path classpathFile, Path out) throws Exception {
        Files.createDirectories(out);
        List<Integer> slots = spec.cluster().replicas();
        System.out.printf(Locale.ROOT, "starting %d Spark Connect servers (%s task slots) ...%n", slots.size(), slots);
        List<SparkServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < slots.size(); i++) {
                servers.add(SparkServer.start("r" + i, slots.get(i), classpathFile, out.resolve("servers")));
            }
            for (SparkServer s : servers) {
                s.awaitReady(180);
            }
            SparkCheck check = new SparkCheck(spec, seed, servers);
            check.warmUp();
            List<Outcome> outcomes = new ArrayList<>();
            for (String policy : policies) {
                System.out.printf(Locale.ROOT, "%s policy %s: %d sessions for up to %s ...%n", LocalDateTime.now()
                        .withNano(0), policy, new Workload(spec, seed).arrivals().size(),
                        DurationText.format(spec.durationMillis()));
                Outcome o = check.play(policy);
                outcomes.add(o);
                System.out.printf(Locale.ROOT, "  %d queries, p50 %.0f ms, p95 %.0f ms, sessions per replica %s, "
                        + "errors %d%n", o.queries(), o.latency(0.5), o.latency(0.95), o.sessionsPerReplica(), o.errors());
            }
            String report = check.report(outcomes, policies);
            SparkCheckChart.write("real Spark: " + spec.name() + " (" + spec.summary() + ")", outcomes,
                    out.resolve("spark-check.png"));
            Files.writeString(out.resolve("spark-check.md"), report);
            System.out.print(report);
            System.out.println("wrote " + out.resolve("spark-check.md") + " and " + out.resolve("spark-check.png"));
        } finally {
            for (SparkServer s : servers) {
                s.close();
            }
        }
    }

    /**
     * Runs a few dozen queries of every size on each server directly, so the first policy does not pay for
     * class loading and code generation, then measures what an idle one-task query costs (Spark's own
     * overhead per query, which the slowdown column includes).
     */
    private void warmUp() {
        List<Double> idle = new ArrayList<>();
        for (SparkServer s : servers) {
            SparkSession spark = SparkSession.builder()
                    .remote(SparkQueries.remote("sc://" + s.grpcAddress(), UUID.randomUUID().toString(), true))
                    .getOrCreate();
            try {
                for (int round = 0; round < 5; round++) {
                    for (int tasks : new int[] {1, 2, 4, 8, 16, 32}) {
                        spark.sql(SparkQueries.sleeping(tasks, 20)).collect();
                    }
                }
                for (int i = 0; i < 10; i++) {
                    long t = System.nanoTime();
                    spark.sql(SparkQueries.sleeping(1, 1)).collect();
                    idle.add((System.nanoTime() - t) / 1e6);
                }
            } finally {
                spark.close();
            }
        }
        idleQueryMillis = idle.stream().mapToDouble(Double::doubleValue).sorted().toArray()[idle.size() / 2];
        System.out.printf(Locale.ROOT, "warmed up: 30 queries per server; an idle one-task query takes %.0f ms "
                + "(median of %d)%n", idleQueryMillis, idle.size());
    }

    private String routerYaml(String policy) {
        StringBuilder y = new StringBuilder();
        ScenarioSpec.Cluster c = spec.cluster();
        y.append("server: {bindAddress: 127.0.0.1, port: 0}\n");
        y.append("probe: {interval: ").append(DurationText.format(c.probeIntervalMillis())).append(", timeout: 1s, staleAfter: ")
                .append(DurationText.format(c.staleAfterMillis())).append("}\n");
        y.append("placement: {policy: ").append(policy).append(", ewmaAlpha: ").append(c.ewmaAlpha())
                .append(", sessionCap: ").append(c.sessionCap()).append("}\n");
        y.append("pool:\n  static:\n");
        for (SparkServer s : servers) {
            y.append("    - {id: ").append(s.name()).append(", grpc: \"").append(s.grpcAddress())
                    .append("\", metricsUrl: \"").append(s.metricsUrl()).append("\", state: ready}\n");
        }
        return y.toString();
    }

    private Outcome play(String policy) throws Exception {
        Workload workload = new Workload(spec, seed);
        int sessions = workload.arrivals().size();
        ConcurrentLinkedQueue<double[]> done = new ConcurrentLinkedQueue<>(); // {latency ms, slowdown}
        AtomicLong errors = new AtomicLong();
        Map<String, String> firstError = new ConcurrentHashMap<>();
        Map<String, List<Double>> demand = new ConcurrentHashMap<>();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(1)).build();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        ExecutorService users = Executors.newFixedThreadPool(sessions);
        String loadAtStart = machineLoad();
        try (RouterServer router = RouterServer.start(ConfigLoader.parse(routerYaml(policy), Map.of()));
             RoutingProxy proxy = new RoutingProxy(router.port())) {
            // Three probe intervals, so every replica has fresh figures before the first session.
            Thread.sleep(3 * spec.cluster().probeIntervalMillis() + 500);
            for (SparkServer s : servers) {
                SparkRestProbe probe = new SparkRestProbe(http, s.metricsUrl(), Duration.ofSeconds(1));
                sampler.scheduleAtFixedRate(() -> {
                    try {
                        LoadSample sample = probe.sample().get(2, TimeUnit.SECONDS);
                        demand.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(sample.utilisation());
                    } catch (Exception e) {
                        // a missed sample only thins the demand figure
                    }
                }, 0, 1, TimeUnit.SECONDS);
            }
            long start = System.nanoTime();
            List<Future<?>> lanes = new ArrayList<>();
            for (Workload.Arrival a : workload.arrivals()) {
                SessionPlan plan = workload.session(a.index());
                lanes.add(users.submit(() -> user(plan, a.atMillis(), start, proxy.port(), done, errors, firstError)));
            }
            long deadline = start + TimeUnit.MILLISECONDS.toNanos(spec.durationMillis() + 180_000);
            for (Future<?> f : lanes) {
                long left = deadline - System.nanoTime();
                try {
                    f.get(Math.max(1, left), TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    f.cancel(true);
                    errors.incrementAndGet();
                    firstError.putIfAbsent("timeout", "a session was still running 3 min after the scenario's end");
                }
            }
            Map<String, Integer> perReplica = new TreeMap<>();
            servers.forEach(s -> perReplica.put(s.name(), 0));
            proxy.sessionUpstreams().values().forEach(address -> servers.stream()
                    .filter(s -> s.grpcAddress().equals(address)).findFirst()
                    .ifPresent(s -> perReplica.merge(s.name(), 1, Integer::sum)));
            Map<String, Double> meanDemand = new TreeMap<>();
            demand.forEach((k, v) -> meanDemand.put(k, v.stream().mapToDouble(Double::doubleValue).average().orElse(0)));
            double[] latencies = done.stream().mapToDouble(d -> d[0]).sorted().toArray();
            double[] slowdowns = done.stream().mapToDouble(d -> d[1]).sorted().toArray();
            return new Outcome(policy, latencies, slowdowns, perReplica, meanDemand, latencies.length, errors.get(),
                    proxy.movedSessions(), firstError.values().stream().findFirst().orElse(""),
                    loadAtStart + " → " + machineLoad());
        } finally {
            users.shutdownNow();
            sampler.shutdownNow();
            // Let the servers finish releasing the sessions before the next policy starts.
            Thread.sleep(5_000);
        }
    }

    /** One user: open a session at its arrival, then query, wait, think, until its lifetime ends. */
    private void user(SessionPlan plan, long arrivalMillis, long startNanos, int proxyPort,
                      ConcurrentLinkedQueue<double[]> done, AtomicLong errors, Map<String, String> firstError) {
        long end = Math.min(arrivalMillis + plan.lifetimeMillis(), spec.durationMillis());
        int reference = spec.referenceSlots();
        // A fresh id per run: Spark remembers closed session ids, and each policy must start from nothing.
        String id = UUID.randomUUID().toString();
        SparkSession spark = null;
        try {
            sleepUntil(startNanos, arrivalMillis);
            spark = SparkSession.builder().remote(SparkQueries.remote("sc://127.0.0.1:" + proxyPort, id, true))
                    .getOrCreate();
            serverVersion = spark.version(); // the first RPC: the session is placed now
            sleepUntil(startNanos, elapsedMillis(startNanos) + plan.firstQueryDelayMillis());
            while (elapsedMillis(startNanos) < end) {
                SessionPlan.Query q = plan.nextQuery();
                long t = System.nanoTime();
                spark.sql(SparkQueries.sleeping(q.tasks(), q.taskMillis())).collect();
                double ms = (System.nanoTime() - t) / 1e6;
                done.add(new double[] {ms, ms / q.aloneMillis(reference)});
                sleepUntil(startNanos, elapsedMillis(startNanos) + plan.nextThinkMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            errors.incrementAndGet();
            firstError.putIfAbsent(e.getClass().getSimpleName(), e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        } finally {
            if (spark != null) {
                try {
                    spark.close();
                } catch (RuntimeException ignored) {
                    // the session is gone either way
                }
            }
        }
    }

    /**
     * The machine's 1-minute load average (Linux), so a reader can see when other work shared the CPU: Spark's
     * per-query overhead grows with it, whatever the placement.
     */
    private static String machineLoad() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (java.io.IOException | RuntimeException e) {
            return "?";
        }
    }

    private static long elapsedMillis(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    private static void sleepUntil(long startNanos, long atMillis) throws InterruptedException {
        long wait = atMillis - elapsedMillis(startNanos);
        if (wait > 0) {
            Thread.sleep(wait);
        }
    }

    private String report(List<Outcome> outcomes, List<String> policies) throws Exception {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Real-Spark check, %s: scenario %s (%s), seed %d; %d Spark Connect %s "
                        + "servers (local[slots], tasks sleep), the router with each policy behind an Envoy stand-in, "
                        + "the real Spark Connect client. After a warm-up of 30 queries per server, an idle one-task query "
                + "took %.0f ms (Spark's own overhead, included in every query time below).%n%n",
                LocalDateTime.now().withNano(0), spec.name(), spec.summary(), seed, servers.size(), serverVersion,
                idleQueryMillis));
        sb.append("| policy | queries | query p50 (ms) | query p95 (ms) | slowdown p50 | slowdown p95 | sessions per replica | "
                + "mean demand per replica | errors | moved sessions | machine load (1 min) |\n"
                + "|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|\n");
        for (Outcome o : outcomes) {
            sb.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.0f | %.2f | %.2f | %s | %s | %d | %d | %s |%n",
                    o.policy(), o.queries(), o.latency(0.5), o.latency(0.95), o.slowdown(0.5), o.slowdown(0.95),
                    o.sessionsPerReplica().values(), fmt(o.meanDemand()), o.errors(), o.moved(), o.machineLoad()));
        }
        outcomes.stream().filter(o -> !o.firstError().isEmpty())
                .forEach(o -> sb.append("\n").append(o.policy()).append(": first error: ").append(o.firstError()));
        sb.append("\n![real-Spark check](spark-check.png)\n\n");

        // The simulator on the same scenario: the same seed, and the held-out seeds for a steadier figure.
        var contenders = Contenders.named(policies, new PolicySettings(0.9, 0.1, spec.cluster().sessionCap()), null);
        Runs.Outcome sameSeed = Runs.run(List.of(spec), contenders, List.of(seed), 2, new ProgressBar("simulating", 1, System.err));
        Runs.Outcome heldOut = Runs.run(List.of(spec), contenders, List.of(4L, 5L, 6L, 7L, 8L, 9L, 10L), 2,
                new ProgressBar("simulating", 1, System.err));
        sb.append("The simulator on the same scenario (`loadtest/bin/loadtest compare --scenario ").append(spec.name())
                .append(" --contenders ").append(String.join(",", policies)).append(" --seeds ...`):\n\n");
        sb.append("| policy | real p95 slowdown | simulated p95, seed ").append(seed)
                .append(" | simulated p95, seeds 4-10 | real sessions per replica | simulated sessions per replica at ")
                .append(DurationText.format(spec.snapshotAtMillis())).append(", seed ").append(seed).append(" |\n")
                .append("|---|---:|---:|---:|---|---|\n");
        Map<String, Double> real = new LinkedHashMap<>();
        Map<String, Double> simulated = new LinkedHashMap<>();
        for (Outcome o : outcomes) {
            Row same = sameSeed.row(spec.name(), o.policy());
            Row held = heldOut.row(spec.name(), o.policy());
            real.put(o.policy(), o.slowdown(0.95));
            simulated.put(o.policy(), held.p95());
            sb.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | %s | %.0f–%.0f |%n", o.policy(),
                    o.slowdown(0.95), same.p95(), held.p95(), o.sessionsPerReplica().values(), same.minSessions(),
                    same.maxSessions()));
        }
        sb.append("\nRanking by p95 slowdown, best first: real ").append(order(real)).append("; simulator (seeds 4-10) ")
                .append(order(simulated)).append(order(real).equals(order(simulated)) ? " (the same order).\n"
                        : " (a different order).\n");
        return sb.toString();
    }

    private static List<String> order(Map<String, Double> values) {
        return values.entrySet().stream().sorted(Map.Entry.comparingByValue()).map(Map.Entry::getKey).toList();
    }

    private static String fmt(Map<String, Double> values) {
        return values.values().stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList().toString();
    }
}
