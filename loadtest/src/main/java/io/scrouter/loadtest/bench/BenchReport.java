package io.scrouter.loadtest.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The benchmark's results as Markdown: per load and router count, each target's throughput and latency, the
 * router's ratios to the no-op (median and range over rounds), Redis commands per request, and the issue's
 * targets marked met or missed.
 */
final class BenchReport {

    /** Everything the report states besides the rounds. */
    record Context(String command, String startedUtc, String machine, String pinning, String jvm, String loadAverage,
                   List<String> othersBefore, List<String> othersAfter, String note, int seconds, int warmupSeconds,
                   int warmupMaxSeconds, int leadInSeconds, int rounds,
                   int known, double idleRedisCommandsPerSecond, String idleRedisCommands, List<String> gcPauses) {
    }

    private BenchReport() {
    }

    /** How each round starts, in the words of the report's method line. */
    static String leadIn(int seconds) {
        return seconds == 0 ? ", each measured from its first request"
                : String.format(Locale.ROOT, ", each measured after a lead-in of %d s of the same load that is not "
                        + "measured (a server idle while the others ran recompiles its request path in its first "
                        + "seconds)", seconds);
    }

    static String render(Context c, List<Block> blocks) {
        StringBuilder md = new StringBuilder();
        md.append("# Decision path: router processes against a no-op ext_proc process\n\n");
        md.append("Command: `").append(c.command()).append("`  \n");
        md.append("Started: ").append(c.startedUtc()).append("  \n");
        md.append("Machine: ").append(c.machine()).append("  \n");
        md.append("Cores: ").append(c.pinning()).append("  \n");
        md.append("Server JVMs: ").append(c.jvm()).append("  \n");
        md.append("Load average during the run: ").append(c.loadAverage()).append("  \n");
        md.append("Other busy processes (CPU over 3 s, 100% = one core): before the run ")
                .append(c.othersBefore().isEmpty() ? "none above 1%" : String.join(", ", c.othersBefore()))
                .append("; after it ")
                .append(c.othersAfter().isEmpty() ? "none above 1%" : String.join(", ", c.othersAfter())).append("  \n");
        if (!c.note().isBlank()) {
            md.append("Note: ").append(c.note()).append("  \n");
        }
        md.append(String.format(Locale.ROOT, "%nEach block: a warm-up per target (discarded) of %d s, longer while the "
                + "target's JIT compiler threads used more than %.0f%% of its CPU in the last %d s, up to %d s; then %d rounds of "
                + "%d s per target, interleaved (the order rotates every round)%s. Each router count has servers and a "
                + "Redis of its own, started for it; known sessions: %,d bound on every router before its first "
                + "block. One `Process` stream per request; streams spread over the routers as Envoy's least-request "
                + "(two random choices) spreads them. Latency: headers sent to answer received, HdrHistogram. Ratios "
                + "pair each router round with the no-op round of the same index; "
                + "figures are `median [min–max]` over rounds.%n", c.warmupSeconds(),
                100 * ProcessBench.SETTLED_JIT_SHARE, Math.min(c.seconds(), c.warmupSeconds()), c.warmupMaxSeconds(),
                c.rounds(), c.seconds(),
                leadIn(c.leadInSeconds()), c.known()));
        md.append(String.format(Locale.ROOT, "%nRedis background while idle (the Redis-backed routers of the first "
                + "router count: their polls, probes, counts, pings): %.0f commands/s (%s).%n",
                c.idleRedisCommandsPerSecond(), c.idleRedisCommands()));
        for (Block b : blocks) {
            md.append("\n## ").append(b.title()).append("\n\n");
            md.append("| target | throughput (req/s) | p50 (ms) | p99 (ms) | throughput ÷ no-op | p99 ÷ no-op | errors |\n");
            md.append("|---|---:|---:|---:|---:|---:|---:|\n");
            for (Target t : Target.values()) {
                if (b.of(t).isEmpty()) {
                    continue;
                }
                boolean base = t == Target.NOOP;
                md.append("| ").append(t.title()).append(" | ").append(b.perSecond(t).format("%.0f")).append(" | ")
                        .append(b.p50(t).format("%.3f")).append(" | ").append(b.p99(t).format("%.3f")).append(" | ")
                        .append(base ? "1" : b.throughputRatio(t).format("%.2f")).append(" | ")
                        .append(base ? "1" : b.p99Ratio(t).format("%.2f")).append(" | ").append(b.errors(t))
                        .append(" |\n");
            }
            String warmup = warmupLine(b);
            md.append("\n").append(warmup.isEmpty() ? "" : warmup + "\n\n").append(redisLine(b)).append("\n");
            String cpu = cpuLine(b);
            if (!cpu.isEmpty()) {
                md.append(cpu).append("\n");
            }
            String switches = switchesLine(b);
            if (!switches.isEmpty()) {
                md.append(switches).append("\n");
            }
            for (Target t : List.of(Target.ROUTER_REDIS, Target.ROUTER_EMBEDDED)) {
                String own = routerLine(b, t);
                if (!own.isEmpty()) {
                    md.append(own).append("\n");
                }
            }
            String sched = schedLine(b);
            if (!sched.isEmpty()) {
                md.append(sched).append("\n");
            }
            String reasons = errorReasons(b);
            if (!reasons.isEmpty()) {
                md.append(reasons).append("\n");
            }
            if (b.routers() > 1) {
                md.append(spreadLine(b)).append("\n");
            }
        }
        md.append("\nGC pauses over the whole run (all loads, warm-up included; `-Xlog:gc` of every server process): ")
                .append(String.join("; ", c.gcPauses())).append(".\n");
        md.append("\n## Against the targets of issue 13\n\n");
        for (String line : verdicts(blocks)) {
            md.append("- ").append(line).append("\n");
        }
        return md.toString();
    }

    /** How long each target's warm-up ran, and the JIT's share of its CPU at the end of it. */
    static String warmupLine(Block b) {
        List<String> parts = new ArrayList<>();
        for (Target t : Target.values()) {
            ProcessBench.Warmup w = b.warmups().get(t);
            if (w != null) {
                parts.add(t.title() + " " + w.describe());
            }
        }
        return parts.isEmpty() ? "" : "Warm-up (discarded): " + String.join("; ", parts) + ".";
    }

    /**
     * How long the servers' threads and redis-server waited for the servers' core once woken, all traced rounds of a
     * target together, and how much of redis-server's longer waits the target's servers held the core ({@code bench
     * --sched-trace}). Empty when nothing was traced.
     */
    static String schedLine(Block b) {
        List<String> parts = new ArrayList<>();
        for (Target t : Target.values()) {
            List<SchedTrace.Waits> traced = b.waits().getOrDefault(t, List.of());
            if (traced.isEmpty()) {
                continue;
            }
            double[] servers = traced.stream().flatMapToDouble(w -> java.util.Arrays.stream(w.serverDelays()))
                    .sorted().toArray();
            double[] redis = traced.stream().flatMapToDouble(w -> java.util.Arrays.stream(w.redisDelays()))
                    .sorted().toArray();
            String part = t.title() + ": its threads " + SchedTrace.Waits.describe(servers);
            if (t == Target.ROUTER_REDIS) {
                double waited = traced.stream().mapToDouble(SchedTrace.Waits::redisLongWaitMillis).sum();
                double held = traced.stream().mapToDouble(SchedTrace.Waits::redisLongWaitHeldByServersMillis).sum();
                part += ", redis-server " + SchedTrace.Waits.describe(redis) + String.format(Locale.ROOT,
                        "; redis-server waited over %.1f ms %.0f ms in all, the routers holding the core %.0f%% of it",
                        SchedTrace.LONG_WAIT_MILLIS, waited, waited > 0 ? 100 * held / waited : 0.0);
            }
            parts.add(part);
        }
        return parts.isEmpty() ? "" : "Wake-to-run delay on the servers' core (`perf sched`, measured parts of the "
                + "traced rounds; p50 / p90 / p99 / max): " + String.join("; ", parts) + ".";
    }

    /** The client's core counts as the limit from this busy share up: it then had no time left to send more. */
    static final double CLIENT_BOUND_SHARE = 0.9;

    /**
     * How often an answer changed hands on the servers' core: context switches per answer of each target's server
     * processes, and of redis-server in the Redis-backed router's rounds, blocked (voluntary) and preempted
     * (involuntary). Empty when not measured.
     */
    static String switchesLine(Block b) {
        List<String> parts = new ArrayList<>();
        for (Target t : Target.values()) {
            Spread woken = b.switchesPerAnswer(t, false, false);
            Spread preempted = b.switchesPerAnswer(t, false, true);
            if (woken == null || preempted == null) {
                continue;
            }
            String part = t.title() + " " + woken.format("%.2f") + " / " + preempted.format("%.2f");
            Spread redisWoken = b.switchesPerAnswer(t, true, false);
            Spread redisPreempted = b.switchesPerAnswer(t, true, true);
            if (t == Target.ROUTER_REDIS && redisWoken != null && redisPreempted != null) {
                part += ", and redis-server in its rounds " + redisWoken.format("%.2f") + " / "
                        + redisPreempted.format("%.2f");
            }
            parts.add(part);
        }
        return parts.isEmpty() ? "" : "Context switches per answer (every thread of the target's server processes, "
                + "`/proc/PID/task/*/status`), blocked / preempted while it could run: " + String.join("; ", parts)
                + ".";
    }

    /**
     * What an answer cost each target's server processes in CPU (every thread, the JIT and the collector
     * included), the routers' as a ratio to the no-op's, and how busy both cores were: where the client's core was
     * nearly always busy, the client set the throughput and the ratio of throughputs understates the servers'
     * difference or hides it. Empty when the CPU was not measured.
     */
    static String cpuLine(Block b) {
        List<String> costs = new ArrayList<>();
        List<String> busy = new ArrayList<>();
        List<String> clientBound = new ArrayList<>();
        List<String> bystanders = new ArrayList<>();
        List<String> steal = new ArrayList<>();
        boolean anySteal = false;
        for (Target t : Target.values()) {
            Spread cost = b.cpuPerAnswer(t);
            if (cost == null) {
                continue;
            }
            Spread ratio = t == Target.NOOP ? null : b.cpuRatio(t);
            Spread jit = b.jitPerAnswer(t);
            costs.add(t.title() + " " + cost.format("%.1f") + " µs"
                    + (ratio == null ? "" : " (" + ratio.format("%.2f") + "× the no-op's)")
                    + (jit == null ? "" : ", of which the JIT " + jit.format("%.1f") + " µs"));
            Spread server = b.coreBusy(t, false);
            Spread client = b.coreBusy(t, true);
            busy.add(String.format(Locale.ROOT, "%s %.0f%% and %.0f%%", t.title(), 100 * server.median(),
                    100 * client.median()));
            if (client.median() >= CLIENT_BOUND_SHARE) {
                clientBound.add(t.title());
            }
            Spread others = b.bystanderPercent(t);
            if (others != null) {
                bystanders.add(t.title() + "'s " + others.format("%.1f") + "%");
            }
            Spread serverSteal = b.stealPercent(t, false);
            Spread clientSteal = b.stealPercent(t, true);
            if (serverSteal != null && clientSteal != null) {
                anySteal |= serverSteal.max() > 0 || clientSteal.max() > 0;
                steal.add(t.title() + "'s " + serverSteal.format("%.1f") + "% and " + clientSteal.format("%.1f") + "%");
            }
        }
        if (costs.isEmpty()) {
            return "";
        }
        String s = "CPU per answer (the target's server processes, all threads, `/proc/PID/stat`): "
                + String.join("; ", costs) + ". Cores busy, the servers' and the client's (median over rounds): "
                + String.join("; ", busy) + ".";
        if (!clientBound.isEmpty()) {
            s += " The client's core was at least " + Math.round(100 * CLIENT_BOUND_SHARE) + "% busy for "
                    + String.join(", ", clientBound) + ": there the client, not the server, set the throughput.";
        }
        if (!bystanders.isEmpty()) {
            s += " The servers' core used meanwhile by the servers not measured (the other targets' processes, idle, "
                    + "and redis-server outside the Redis-backed router's rounds), in the rounds of: "
                    + String.join("; ", bystanders) + ".";
        }
        if (anySteal) {
            s += " Of the cores' busy time, the host took (steal, `/proc/stat`: the hypervisor ran something else "
                    + "while this machine had work for the core) of the servers' and of the client's core, in the "
                    + "rounds of: " + String.join("; ", steal) + ".";
        }
        return s;
    }

    /**
     * A router target's own account of its rounds, all rounds together: its answers by outcome, and its decision
     * and find-or-bind times as its histogram buckets bound them. Empty when the target has no such account.
     */
    static String routerLine(Block b, Target t) {
        RouterView all = RouterView.NONE;
        for (Round r : b.of(t)) {
            all = all.plus(r.router());
        }
        long answers = all.decisionCount();
        if (answers <= 0) {
            return "";
        }
        List<String> outcomes = new ArrayList<>();
        all.outcomes().forEach((outcome, n) -> {
            if (n > 0) {
                outcomes.add(String.format(Locale.ROOT, "%s %.1f%%", outcome, 100.0 * n / answers));
            }
        });
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "%s, its own account (`/metrics`, all "
                + "rounds, lead-ins included): %,d decisions, %s; decision time p50 %s, p99 %s",
                capitalised(t.title()), answers,
                String.join(", ", outcomes), RouterView.formatAtMost(all.decisions(), 0.5),
                RouterView.formatAtMost(all.decisions(), 0.99)));
        if (all.findOrBind().getOrDefault(Double.POSITIVE_INFINITY, 0L) > 0) {
            s.append(String.format(Locale.ROOT, "; of which its find-or-bind calls to Redis p50 %s, p99 %s",
                    RouterView.formatAtMost(all.findOrBind(), 0.5), RouterView.formatAtMost(all.findOrBind(), 0.99)));
        }
        if (all.outcomes().getOrDefault("fallback", 0L) > 0) {
            s.append(" (a fallback answer placed its session by rendezvous, not by the placement policy: through the "
                    + "store while the router settled after a failed store call, without it while its breaker was "
                    + "open)");
        }
        return s.append('.').toString();
    }

    /**
     * Requests a second whose session the placement policy placed (outcome {@code placed} or {@code placed_degraded}
     * in the router's own account), per round: the measured answers a second times the share the policy placed in
     * the router's account, which covers the round's lead-in as well; null when the rounds have no such account.
     */
    static Spread placedByPolicyPerSecond(List<Round> rounds) {
        List<Double> perSecond = new ArrayList<>();
        for (Round r : rounds) {
            long all = r.router().decisionCount();
            if (all <= 0) {
                return null;
            }
            long byPolicy = r.router().outcomes().getOrDefault("placed", 0L)
                    + r.router().outcomes().getOrDefault("placed_degraded", 0L);
            perSecond.add(r.perSecond() * byPolicy / all);
        }
        return perSecond.isEmpty() ? null : Spread.of(perSecond);
    }

    private static String capitalised(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    /** Redis commands per request of the Redis-backed router, median over its rounds, and Redis CPU per request. */
    static String redisLine(Block b) {
        List<Round> rounds = b.of(Target.ROUTER_REDIS).stream().filter(r -> r.redis() != null && r.answered() > 0).toList();
        if (rounds.isEmpty()) {
            return "";
        }
        Map<String, List<Double>> per = new TreeMap<>();
        List<Double> total = new ArrayList<>();
        List<Double> sent = new ArrayList<>();
        List<Double> cpu = new ArrayList<>();
        for (Round r : rounds) {
            r.redis().calls().forEach((cmd, n) -> per.computeIfAbsent(cmd, k -> new ArrayList<>())
                    .add((double) n / r.answered()));
            total.add((double) r.redis().totalCalls() / r.answered());
            sent.add((double) r.redis().sentCalls() / r.answered());
            cpu.add(r.redis().cpuSeconds() * 1e6 / r.answered());
        }
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
                "Redis during the Redis-backed router's rounds, per request: %.2f commands sent (", Spread.of(sent).median()));
        List<String> parts = new ArrayList<>();
        List<String> inScripts = new ArrayList<>();
        per.forEach((cmd, v) -> {
            // A command absent from some rounds counts 0 there.
            while (v.size() < rounds.size()) {
                v.add(0.0);
            }
            double m = Spread.of(v).median();
            if (m >= 0.005) {
                (RedisCommandStats.RUN_BY_SCRIPTS.contains(cmd) ? inScripts : parts)
                        .add(String.format(Locale.ROOT, "%s %.2f", cmd, m));
            }
        });
        s.append(String.join(", ", parts)).append(String.format(Locale.ROOT, "), plus %s run inside the scripts; "
                + "Redis CPU %.1f µs per request.", inScripts.isEmpty() ? "nothing" : String.join(", ", inScripts),
                Spread.of(cpu).median()));
        return s.toString();
    }

    private static String errorReasons(Block b) {
        List<String> parts = new ArrayList<>();
        for (Target t : Target.values()) {
            Map<String, Long> sum = new TreeMap<>();
            b.of(t).forEach(r -> r.errorReasons().forEach((k, v) -> sum.merge(k, v, Long::sum)));
            if (!sum.isEmpty()) {
                parts.add(t.title() + ": " + sum);
            }
        }
        return parts.isEmpty() ? "" : "Errors by answer: " + String.join("; ", parts) + ".";
    }

    private static String spreadLine(Block b) {
        List<String> parts = new ArrayList<>();
        for (Target t : Target.values()) {
            List<Round> rounds = b.of(t);
            if (rounds.isEmpty()) {
                continue;
            }
            long[] sum = new long[rounds.get(0).perServer().length];
            for (Round r : rounds) {
                for (int i = 0; i < sum.length; i++) {
                    sum[i] += r.perServer()[i];
                }
            }
            long all = java.util.Arrays.stream(sum).sum();
            StringBuilder share = new StringBuilder();
            for (int i = 0; i < sum.length; i++) {
                share.append(i == 0 ? "" : "/").append(String.format(Locale.ROOT, "%.0f%%", 100.0 * sum[i] / Math.max(1, all)));
            }
            parts.add(t.title() + " " + share);
        }
        return "Requests per server: " + String.join(", ", parts) + ".";
    }

    /** The targets, each marked met or missed from the blocks that measure it. */
    static List<String> verdicts(List<Block> blocks) {
        List<String> out = new ArrayList<>();
        for (Block b : blocks) {
            if (b.load() == SessionMix.KNOWN && !b.of(Target.ROUTER_REDIS).isEmpty()) {
                Spread tp = b.throughputRatio(Target.ROUTER_REDIS);
                Spread p99 = b.p99Ratio(Target.ROUTER_REDIS);
                out.add(String.format(Locale.ROOT, "Redis-backed known sessions, %d router(s): throughput %.2f× the "
                        + "no-op's (target ≥ 0.85×: %s), p99 %.2f× (target ≤ 1.25×: %s); medians over %d rounds, ranges "
                        + "in the table.", b.routers(), tp.median(), tp.median() >= 0.85 ? "met" : "missed", p99.median(),
                        p99.median() <= 1.25 ? "met" : "missed", tp.n()));
            }
            if (b.load() == SessionMix.NEW && !b.of(Target.ROUTER_REDIS).isEmpty()) {
                Spread p50 = b.p50(Target.ROUTER_REDIS);
                Spread p99 = b.p99(Target.ROUTER_REDIS);
                Spread rate = b.perSecond(Target.ROUTER_REDIS);
                if (b.inFlight() <= 8) {
                    out.add(String.format(Locale.ROOT, "New sessions, Redis on loopback, %d in flight, %d router(s): p50 "
                            + "%.3f ms (target ≤ 0.5 ms: %s), p99 %.3f ms (target ≤ 2 ms: %s); the no-op's p99 in the "
                            + "same rounds: %.3f ms.", b.inFlight(), b.routers(), p50.median(),
                            p50.median() <= 0.5 ? "met" : "missed", p99.median(), p99.median() <= 2 ? "met" : "missed",
                            b.p99(Target.NOOP).median()));
                } else {
                    double perRouter = rate.median() / b.routers();
                    Spread byPolicy = placedByPolicyPerSecond(b.of(Target.ROUTER_REDIS));
                    if (byPolicy == null) {
                        out.add(String.format(Locale.ROOT, "New sessions per second per router, %d in flight, %d "
                                + "router(s): %.0f (target ≥ 5,000: %s; the no-op answers %.0f per server).",
                                b.inFlight(), b.routers(), perRouter, perRouter >= 5000 ? "met" : "missed",
                                b.perSecond(Target.NOOP).median() / b.routers()));
                    } else {
                        double placed = byPolicy.median() / b.routers();
                        out.add(String.format(Locale.ROOT, "New sessions per second per router, %d in flight, %d "
                                + "router(s): %.0f answered, of which %.0f placed by the placement policy (target ≥ "
                                + "5,000 placed so: %s). The rest were placed by rendezvous, which a router falls back "
                                + "to for `redis.settleAfterOutage` after a store call failed, or while its breaker is "
                                + "open; the no-op answers %.0f per server.", b.inFlight(), b.routers(), perRouter,
                                placed, placed >= 5000 ? "met" : "missed", b.perSecond(Target.NOOP).median() / b.routers()));
                    }
                }
                double commands = Spread.of(b.of(Target.ROUTER_REDIS).stream()
                        .filter(r -> r.redis() != null && r.answered() > 0)
                        .map(r -> (double) r.redis().sentCalls() / r.answered()).toList()).median();
                out.add(String.format(Locale.ROOT, "Redis round trips of a new session (%d in flight, %d router(s)): "
                        + "%.2f commands sent to Redis per request, background included. The decision waits for one, "
                        + "`RedisSessionStore.findOrBind`: a SET NX PX, which binds a new session (the find-or-bind "
                        + "script follows only for a key already there); the binding feed's PUBLISH and XADD and the "
                        + "replica index's ZADD follow it unawaited, gathered for `redis.followUpGather` (1 ms unless "
                        + "the server JVMs line above names another) into one script call (EVALSHA) on the router's "
                        + "event loop (`FollowUpWrites`, one ZADD per replica per batch). "
                        + "Awaited: 1 (target ≤ 1: met).", b.inFlight(), b.routers(), commands));
            }
        }
        return out;
    }
}
