package io.scrouter.loadtest.fault;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.loadtest.traffic.TrafficDriver.Result;
import io.scrouter.loadtest.traffic.TrafficDriver;
import io.scrouter.testkit.redis.RedisProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Redis faults under load, two routers on one redis-server: Redis hangs (SIGSTOP) for {@code --hang-seconds},
 * then, after a pause, dies for {@code --dead-seconds} and restarts empty (persistence off). Reports, per
 * phase, decision latency, how many requests were answered "retry" (UNAVAILABLE), whether new sessions were
 * still placed and known sessions kept their replica, how many sessions the two routers placed differently,
 * and how long after each recovery routers and Redis agree again.
 */
@Command(name = "fault-redis", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "Redis faults under load, two routers on one redis-server: Redis hangs "
        + "(SIGSTOP), then dies and restarts empty; per phase, latency, retry answers, placements and agreement. "
        + "Exit status 1 if a known session moved or the routers and Redis did not agree again. Needs redis-server.")
public final class RedisOutage implements Callable<Integer> {
    // Production defaults except refreshEvery (30 s by default): a shorter push interval makes bindings lost
    // with the empty restart come back within the run, so the write-back can be observed.
    private static final String ROUTER_YAML = """
            pool: {pollInterval: 1s, departureGrace: 5s}
            probe: {interval: 1s, timeout: 1s, staleAfter: 5s}
            sessions: {idleTtl: 30m, refreshEvery: 5s}
            """;

    @Option(names = "--steady-seconds", defaultValue = "20", paramLabel = "N",
            description = "Traffic before Redis hangs, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long steadySeconds;

    @Option(names = "--hang-seconds", defaultValue = "30", paramLabel = "N",
            description = "How long Redis hangs, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long hangSeconds;

    @Option(names = "--between-seconds", defaultValue = "25", paramLabel = "N",
            description = "Traffic between the hang and the death, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long betweenSeconds;

    @Option(names = "--dead-seconds", defaultValue = "30", paramLabel = "N",
            description = "How long Redis is dead, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long deadSeconds;

    @Option(names = "--after-seconds", defaultValue = "60", paramLabel = "N",
            description = "Traffic after the empty restart, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long afterSeconds;

    @Option(names = "--follow-up-gather", paramLabel = "DURATION",
            description = "The routers' redis.followUpGather, 0ms to 20ms (default: the router's, 1ms). A session "
                    + "bound within it before Redis hangs is not yet announced to the other router.")
    String followUpGather;

    @Mixin
    TrafficOptions traffic;

    @Spec
    CommandSpec spec;

    public RedisOutage() {
    }


    private record Phase(String name, long from, long to) {
    }

    @Override
    public Integer call() throws Exception {
        return run(Bounds.within(spec, "--steady-seconds", steadySeconds, 1, 3600),
                Bounds.within(spec, "--hang-seconds", hangSeconds, 1, 3600),
                Bounds.within(spec, "--between-seconds", betweenSeconds, 1, 3600),
                Bounds.within(spec, "--dead-seconds", deadSeconds, 1, 3600),
                Bounds.within(spec, "--after-seconds", afterSeconds, 1, 3600), traffic.threads(spec),
                traffic.newEvery(spec), Bounds.followUpGather(spec, "--follow-up-gather", followUpGather)) ? 0 : 1;
    }

    /** @param redisSettings added to the routers' redis section: their {@code redis.followUpGather}, or "" */
    private static boolean run(long steady, long hang, long between, long dead, long after, int threads,
                               int newEvery, String redisSettings) throws Exception {
        RedisKeys keys = new RedisKeys("outage");
        try (RedisProcess redis = RedisProcess.start()) {
            Config rc = new Config();
            rc.useSingleServer().setAddress(redis.address());
            RedissonClient admin = Redisson.create(rc);
            String redisYaml = "redis: {address: \"" + redis.address() + "\", timeout: 50ms, keyPrefix: outage"
                    + (redisSettings.isEmpty() ? "" : ", " + redisSettings) + "}";
            try (Rig rig = new Rig(admin, redisYaml, "outage", 8, Duration.ofSeconds(10))) {
                Rig.Fleet fleet = rig.startFleet(2, ROUTER_YAML);
                List<RouterServer> routers = fleet.routers();
                List<Outcomes> outcomes = fleet.outcomes();
                List<ExtProcClient> envoys = fleet.envoys();
                System.out.printf("fault-redis: 8 replicas, 2 routers on redis-server :%d (timeout 50ms, "
                        + "followUpGather %d ms, persistence off), %d traffic loops; %d s steady, Redis hung %d s, %d s, "
                        + "Redis dead %d s then restarted empty, %d s after%n", redis.port(),
                        routers.get(0).config().redis().orElseThrow().followUpGather().toMillis(), threads, steady,
                        hang, between, dead, after);
                try (FaultTraffic traffic = new FaultTraffic(envoys, threads, 50, newEvery,
                        steady + hang + between + dead + after + 30, 50_000_000L)) {
                    long start = traffic.startNanos();
                    sleepSeconds(steady);
                    long hungAt = System.nanoTime();
                    redis.pause();
                    sleepSeconds(hang);
                    redis.resume();
                    long resumedAt = System.nanoTime();
                    long convergedAfterHang = awaitAgreement(routers, traffic, admin, keys, resumedAt, between);
                    long killedAt = System.nanoTime();
                    redis.kill();
                    sleepSeconds(dead);
                    redis.restart();
                    long restartedAt = System.nanoTime();
                    long convergedAfterDeath = awaitAgreement(routers, traffic, admin, keys, restartedAt, after);
                    traffic.close();
                    Agreement.Gap finalGap = Agreement.check(routers, traffic.sessions(), admin, keys);
                    long end = System.nanoTime();

                    List<Result> all = traffic.results();
                    List<Phase> phases = List.of(new Phase("steady", start + TimeUnit.SECONDS.toNanos(5), hungAt),
                            new Phase("Redis hung (SIGSTOP)", hungAt, resumedAt),
                            new Phase("after resume", resumedAt, killedAt),
                            new Phase("Redis dead", killedAt, restartedAt),
                            new Phase("after empty restart", restartedAt, end));
                    return report(all, phases, outcomes, hungAt, resumedAt, restartedAt, convergedAfterHang,
                            convergedAfterDeath, finalGap);
                }
            } finally {
                admin.shutdown();
            }
        }
    }

    /**
     * Polls until every session a router holds is in Redis with the same replica, for at most
     * {@code seconds}, then waits out the rest of the phase. Returns when agreement was first seen, or
     * Long.MAX_VALUE.
     */
    private static long awaitAgreement(List<RouterServer> routers, FaultTraffic traffic, RedissonClient admin,
                                       RedisKeys keys, long since, long seconds) throws InterruptedException {
        long until = since + TimeUnit.SECONDS.toNanos(seconds);
        long agreedAt = Long.MAX_VALUE;
        long lastPrint = 0;
        while (System.nanoTime() < until) {
            if (agreedAt == Long.MAX_VALUE) {
                try {
                    Agreement.Gap gap = Agreement.check(routers, traffic.sessions(), admin, keys);
                    if (gap.total() == 0) {
                        agreedAt = System.nanoTime();
                    } else if (System.nanoTime() - lastPrint > TimeUnit.SECONDS.toNanos(5)) {
                        lastPrint = System.nanoTime();
                        System.out.printf("  %5.1f s after recovery: %d of %d sessions not yet in Redis as the "
                                        + "routers hold them (%d missing, %d different)%n", (lastPrint - since) / 1e9,
                                gap.total(), gap.checked(), gap.missingInRedis(), gap.different());
                    }
                } catch (RuntimeException redisNotBackYet) {
                    // the checker's own client reconnects a little later than the routers'
                }
            }
            Thread.sleep(250);
        }
        return agreedAt;
    }

    private static boolean report(List<Result> all, List<Phase> phases, List<Outcomes> outcomes, long hungAt,
                                  long resumedAt, long restartedAt, long convergedAfterHang, long convergedAfterDeath,
                                  Agreement.Gap finalGap) {
        Map<String, String> home = Figures.homes(all);
        Set<String> moved = TrafficDriver.movedSessions(all);
        Set<String> placedDifferently = Figures.placedDifferently(all);
        // Sessions that had a replica before the first fault: "known" through both faults.
        long knownMoved = moved.stream().filter(s -> all.stream().anyMatch(r -> r.session().equals(s)
                && r.upstream() != null && r.atNanos() < hungAt)).count();
        int unavailable = io.grpc.Status.Code.UNAVAILABLE.value();

        System.out.println();
        System.out.println("| phase | requests | decision p50 / p95 / p99 (ms) | answered 'retry' (UNAVAILABLE) | other "
                + "refusals | new sessions placed / opened | fallback (rendezvous) decisions, router 0 / 1 |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        boolean fastEnough = true;
        boolean placedDuringFaults = true;
        for (Phase p : phases) {
            List<Result> in = FaultTraffic.between(all, p.from(), p.to());
            long retry = Figures.withStatus(in, unavailable);
            long other = in.stream().filter(r -> r.upstream() == null && r.grpcStatus() != unavailable).count();
            long opened = in.stream().filter(Result::newSession).count();
            long placed = in.stream().filter(r -> r.newSession() && r.upstream() != null).count();
            System.out.printf("| %s | %d | %s | %d | %d | %d / %d | %d / %d |%n", p.name(), in.size(),
                    Figures.quantiles(in), retry, other, placed, opened,
                    outcomes.get(0).count("fallback", p.from(), p.to()),
                    outcomes.get(1).count("fallback", p.from(), p.to()));
            if (p.name().startsWith("Redis")) {
                fastEnough &= Figures.millis(in, 0.99) < 100;
                placedDuringFaults &= placed > 0;
            }
        }
        long transport = Figures.withStatus(all, Figures.TRANSPORT_ERROR);
        long otherRefusals = all.stream().filter(r -> r.upstream() == null && r.grpcStatus() != unavailable).count();
        System.out.println();
        System.out.printf("%d requests, %d sessions; refusals by status: %s%n", all.size(), home.size(),
                Figures.refusals(all));
        System.out.printf("sessions moved (routed to two replicas over the run): %d, of which known before the first "
                + "fault: %d; sessions the two routers placed differently: %d%n", moved.size(), knownMoved,
                placedDifferently.size());
        long t0 = phases.get(0).from();
        for (String m : moved.stream().sorted().limit(3).toList()) {
            // A moved session's requests against the fault timeline, to tell which transition moved it.
            System.out.printf("  moved %s (times in s from the steady window; hung %.1f, resumed %.1f, killed %.1f, "
                            + "restarted %.1f):%n", m, (phases.get(1).from() - t0) / 1e9, (phases.get(2).from() - t0) / 1e9,
                    (phases.get(3).from() - t0) / 1e9, (phases.get(4).from() - t0) / 1e9);
            String[] last = {null};
            all.stream().filter(x -> x.session().equals(m)).sorted(java.util.Comparator.comparingLong(Result::atNanos))
                    .forEach(x -> {
                        if (!java.util.Objects.equals(last[0], x.upstream() + "/" + x.router())) {
                            last[0] = x.upstream() + "/" + x.router();
                            System.out.printf("    t=%.3f router %d -> %s%n", (x.atNanos() - t0) / 1e9, x.router(),
                                    x.upstream() == null ? "status " + x.grpcStatus() : x.upstream());
                        }
                    });
        }
        for (int r = 0; r < outcomes.size(); r++) {
            // Placement stays on rendezvous for redis.settleAfterOutage (5 s) after the store's last failure.
            System.out.printf("router %d: load-aware placement resumed (first PLACED decision) %s after the resume, "
                            + "%s after the restart%n", r, Figures.seconds(resumedAt, outcomes.get(r).first("placed", resumedAt)),
                    Figures.seconds(restartedAt, outcomes.get(r).first("placed", restartedAt)));
        }
        System.out.printf("routers and Redis agree again (every session a router holds is in Redis with the same "
                        + "replica): %s after the resume, %s after the empty restart; at the end %d of %d sessions "
                        + "differ%n", Figures.seconds(resumedAt, convergedAfterHang),
                Figures.seconds(restartedAt, convergedAfterDeath), finalGap.total(), finalGap.checked());

        boolean ok = fastEnough && placedDuringFaults && moved.isEmpty() && placedDifferently.isEmpty()
                && transport == 0 && otherRefusals == 0 && convergedAfterHang != Long.MAX_VALUE
                && convergedAfterDeath != Long.MAX_VALUE;
        System.out.printf("VERDICT fault-redis: %s — decision p99 during each fault %s 100 ms, new sessions %s placed "
                        + "during both faults, %d sessions moved / %d placed differently (target 0), %d refusals other "
                        + "than 'retry', routers and Redis %s after both recoveries%n", ok ? "PASS" : "FAIL",
                fastEnough ? "<" : "NOT <", placedDuringFaults ? "were" : "were NOT", moved.size(),
                placedDifferently.size(), otherRefusals,
                convergedAfterHang != Long.MAX_VALUE && convergedAfterDeath != Long.MAX_VALUE ? "agreed again"
                        : "did NOT agree again within the run");
        return ok;
    }

    private static void sleepSeconds(long s) throws InterruptedException {
        Thread.sleep(TimeUnit.SECONDS.toMillis(s));
    }
}
