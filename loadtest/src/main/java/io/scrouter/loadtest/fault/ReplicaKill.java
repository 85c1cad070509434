package io.scrouter.loadtest.fault;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.grpc.Status;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.loadtest.traffic.TrafficDriver.Result;
import io.scrouter.testkit.redis.RedisProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The seed's acceptance test: replicas behind two or more routers on one redis-server, sustained traffic, then
 * 20% of the replicas killed at once. Shows how fast each router stops placing new sessions on them (fast
 * detection by a failed probe, not the instance store's expiry), that no session on a healthy replica sees an
 * error, the decision latency in steady state against during the fault, and what the dead replicas' own
 * sessions get (their route until the replica leaves the pool, then FAILED_PRECONDITION "session lost").
 */
@Command(name = "fault-kill", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "The seed's acceptance test: replicas behind two or more routers on one "
        + "redis-server, sustained traffic, then a share of the replicas killed at once; exit status 1 if a session on "
        + "a healthy replica saw an error. Needs redis-server.")
public final class ReplicaKill implements Callable<Integer> {
    // Production defaults (README), so the figures are what a deployment would see.
    private static final String ROUTER_YAML = """
            pool: {pollInterval: 1s, departureGrace: 5s}
            probe: {interval: 1s, timeout: 1s, staleAfter: 5s}
            sessions: {idleTtl: 30m, refreshEvery: 30s}
            """;
    private static final Duration REPLICA_TTL = Duration.ofSeconds(10);

    @Option(names = "--replicas", defaultValue = "10", paramLabel = "N",
            description = "Replicas, 2 to 100 (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--kill", defaultValue = "0.2", paramLabel = "SHARE",
            description = "Share of the replicas killed at once, above 0 and below 1; at least one (default: "
                    + "${DEFAULT-VALUE}).")
    double kill;

    @Option(names = "--routers", defaultValue = "2", paramLabel = "N",
            description = "Routers on the one redis-server, 1 to 8 (default: ${DEFAULT-VALUE}).")
    int routers;

    @Option(names = "--steady-seconds", defaultValue = "60", paramLabel = "N",
            description = "Traffic before the kill, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long steadySeconds;

    @Option(names = "--after-seconds", defaultValue = "45", paramLabel = "N",
            description = "Traffic after the kill, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long afterSeconds;

    @Mixin
    TrafficOptions traffic;

    @Spec
    CommandSpec spec;

    public ReplicaKill() {
    }

    @Override
    public Integer call() throws Exception {
        Bounds.within(spec, "--replicas", replicas, 2, 100);
        if (!(kill > 0 && kill < 1)) {
            throw new ParameterException(spec.commandLine(), "--kill is a share of the replicas, above 0 and below 1, "
                    + "such as 0.2; not " + kill);
        }
        int killed = (int) Math.max(1, Math.round(replicas * kill));
        if (killed >= replicas) {
            throw new ParameterException(spec.commandLine(), "--kill " + kill + " of " + replicas
                    + " replicas kills them all; give a smaller share or more --replicas");
        }
        return run(replicas, killed, Bounds.within(spec, "--routers", routers, 1, 8),
                Bounds.within(spec, "--steady-seconds", steadySeconds, 1, 3600),
                Bounds.within(spec, "--after-seconds", afterSeconds, 1, 3600), traffic.threads(spec),
                traffic.newEvery(spec)) ? 0 : 1;
    }

    private static boolean run(int replicaCount, int killed, int routerCount, long steadySeconds, long afterSeconds,
                               int threads, int newEvery) throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            Config rc = new Config();
            rc.useSingleServer().setAddress(redis.address());
            RedissonClient admin = Redisson.create(rc);
            String redisYaml = "redis: {address: \"" + redis.address() + "\", timeout: 50ms, keyPrefix: kill}";
            try (Rig rig = new Rig(admin, redisYaml, "kill", replicaCount, REPLICA_TTL)) {
                List<RouterServer> routers = new ArrayList<>();
                List<ExtProcClient> envoys = new ArrayList<>();
                for (int i = 0; i < routerCount; i++) {
                    RouterServer rs = rig.startRouter(ROUTER_YAML, new Outcomes());
                    routers.add(rs);
                    envoys.add(rig.envoyFor(rs));
                }
                awaitFresh(rig);
                List<Replica> dead = rig.replicas().subList(replicaCount - killed, replicaCount);
                Set<String> deadAddresses = dead.stream().map(Replica::grpcAddress).collect(Collectors.toSet());
                System.out.printf("fault-kill: %d replicas, %d routers on one redis-server, %d traffic loops; %d s steady,"
                                + " then kill %s at once, then %d s more (replica ttl %s, departure grace 5s, probe 1s)%n",
                        replicaCount, routerCount, threads, steadySeconds,
                        dead.stream().map(Replica::id).toList(), afterSeconds, REPLICA_TTL);

                long[][] failedAt = new long[routerCount][killed];
                long[][] leftAt = new long[routerCount][killed];
                Arrays.stream(failedAt).forEach(a -> Arrays.fill(a, Long.MAX_VALUE));
                Arrays.stream(leftAt).forEach(a -> Arrays.fill(a, Long.MAX_VALUE));
                long killAt;
                List<Result> all;
                long end;
                try (FaultTraffic traffic = new FaultTraffic(envoys, threads, 50, newEvery,
                        steadySeconds + afterSeconds + 20, 20_000_000L)) {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(steadySeconds));
                    killAt = System.nanoTime();
                    for (int d = 0; d < killed; d++) {
                        rig.kill(replicaCount - killed + d);
                    }
                    long watchUntil = killAt + TimeUnit.SECONDS.toNanos(afterSeconds);
                    while (System.nanoTime() < watchUntil) {
                        long now = System.nanoTime();
                        for (int r = 0; r < routerCount; r++) {
                            for (int d = 0; d < killed; d++) {
                                String id = dead.get(d).id();
                                if (failedAt[r][d] == Long.MAX_VALUE
                                        && routers.get(r).board().get(id).consecutiveFailures() > 0) {
                                    failedAt[r][d] = now;
                                }
                                if (leftAt[r][d] == Long.MAX_VALUE && routers.get(r).pool().snapshot().get(id) == null) {
                                    leftAt[r][d] = now;
                                }
                            }
                        }
                        Thread.sleep(5);
                    }
                    traffic.close();
                    all = traffic.results();
                    end = System.nanoTime();
                    return report(all, traffic.startNanos(), killAt, end, routerCount, dead, deadAddresses, failedAt,
                            leftAt);
                }
            } finally {
                admin.shutdown();
            }
        }
    }

    private static void awaitFresh(Rig rig) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!rig.allFresh() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    private static boolean report(List<Result> all, long start, long killAt, long end, int routerCount,
                                  List<Replica> dead, Set<String> deadAddresses, long[][] failedAt, long[][] leftAt) {
        Map<String, String> home = Figures.homes(all);
        long allLeft = Arrays.stream(leftAt).flatMapToLong(Arrays::stream).max().orElse(Long.MAX_VALUE);
        long faultEnd = allLeft == Long.MAX_VALUE ? end : Math.min(end, allLeft + TimeUnit.SECONDS.toNanos(2));

        System.out.println();
        System.out.println("detection, per router (from the kill):");
        boolean stoppedFast = true;
        for (int r = 0; r < routerCount; r++) {
            int router = r;
            long firstFailed = Arrays.stream(failedAt[r]).min().orElse(Long.MAX_VALUE);
            long allFailed = Arrays.stream(failedAt[r]).max().orElse(Long.MAX_VALUE);
            long left = Arrays.stream(leftAt[r]).max().orElse(Long.MAX_VALUE);
            // Last new session this router placed on a dead replica, and how long after its probe of that
            // replica first failed (negative: before).
            long lastNewOnDead = Long.MIN_VALUE;
            long worstAfterDetection = Long.MIN_VALUE;
            for (Result x : all) {
                if (x.router() == router && x.newSession() && x.upstream() != null && deadAddresses.contains(x.upstream())
                        && x.atNanos() >= killAt) {
                    long answered = x.atNanos() + x.nanos();
                    lastNewOnDead = Math.max(lastNewOnDead, answered);
                    int d = indexOf(dead, x.upstream());
                    worstAfterDetection = Math.max(worstAfterDetection, answered - failedAt[r][d]);
                }
            }
            if (worstAfterDetection > TimeUnit.SECONDS.toNanos(1)) {
                stoppedFast = false;
            }
            System.out.printf("  router %d: first failed probe %s, all %d dead replicas failed %s; last new session "
                            + "placed on a dead replica %s (%s after that replica's first failed probe); dead replicas "
                            + "left the pool %s%n", r, Figures.seconds(killAt, firstFailed), dead.size(),
                    Figures.seconds(killAt, allFailed),
                    lastNewOnDead == Long.MIN_VALUE ? "none after the kill" : Figures.seconds(killAt, lastNewOnDead),
                    worstAfterDetection == Long.MIN_VALUE ? "-" : String.format("%.3f s", worstAfterDetection / 1e9),
                    Figures.seconds(killAt, left));
        }

        // Sessions on healthy replicas: every request must be routed to the session's replica.
        List<Result> healthy = all.stream().filter(x -> home.containsKey(x.session())
                && !deadAddresses.contains(home.get(x.session()))).toList();
        long healthyErrors = healthy.stream().filter(x -> x.upstream() == null
                || !x.upstream().equals(home.get(x.session()))).count();
        List<Result> healthyAfter = FaultTraffic.between(healthy, killAt, Long.MAX_VALUE);
        long neverRouted = all.stream().filter(x -> !home.containsKey(x.session())).count();

        // Sessions pinned to the dead replicas, after the kill.
        List<Result> orphans = FaultTraffic.between(all, killAt, Long.MAX_VALUE).stream()
                .filter(x -> deadAddresses.contains(home.get(x.session()))).toList();
        long orphanSessions = orphans.stream().map(Result::session).distinct().count();
        long toDead = orphans.stream().filter(x -> x.upstream() != null && deadAddresses.contains(x.upstream())).count();
        long lastToDead = orphans.stream().filter(x -> x.upstream() != null).mapToLong(Result::atNanos).max()
                .orElse(Long.MIN_VALUE);
        int lost = Status.Code.FAILED_PRECONDITION.value();
        long sessionLost = Figures.withStatus(orphans, lost);
        long firstLost = orphans.stream().filter(x -> x.grpcStatus() == lost).mapToLong(Result::atNanos).min()
                .orElse(Long.MAX_VALUE);
        long otherOrphan = orphans.size() - toDead - sessionLost;
        boolean lostAfterLeaving = orphans.stream().filter(x -> x.grpcStatus() == lost)
                .allMatch(x -> x.atNanos() + x.nanos() >= Arrays.stream(leftAt).flatMapToLong(Arrays::stream).min()
                        .orElse(Long.MAX_VALUE));

        List<Result> steady = FaultTraffic.between(all, start + TimeUnit.SECONDS.toNanos(5), killAt);
        List<Result> fault = FaultTraffic.between(all, killAt, faultEnd);
        List<Result> recovered = FaultTraffic.between(all, faultEnd, Long.MAX_VALUE);
        double p95Delta = Figures.millis(fault, 0.95) - Figures.millis(steady, 0.95);
        long transport = Figures.withStatus(all, Figures.TRANSPORT_ERROR);
        Set<String> moved = io.scrouter.loadtest.traffic.TrafficDriver.movedSessions(all);

        System.out.println();
        System.out.printf("requests: %d in %.0f s (%.0f/s), %d sessions, %d requests of sessions never routed "
                        + "(rejected first request), %d transport errors; not routed, by status: %s%n", all.size(),
                (end - start) / 1e9, all.size() / ((end - start) / 1e9), home.size(), neverRouted, transport,
                Figures.refusals(all));
        System.out.printf("decision p50 / p95 / p99 (ms, as Envoy sees it): steady %s (%d req); fault, kill to "
                        + "dead replicas gone + 2 s %s (%d req); after %s (%d req); fault p95 - steady p95 = %+.2f ms%n",
                Figures.quantiles(steady), steady.size(), Figures.quantiles(fault), fault.size(),
                Figures.quantiles(recovered), recovered.size(), p95Delta);
        System.out.printf("sessions on healthy replicas: %d requests after the kill, %d errors or wrong routes over "
                + "the whole run; sessions moved: %d%n", healthyAfter.size(), healthyErrors, moved.size());
        System.out.printf("sessions pinned to dead replicas: %d sessions, %d requests after the kill: %d routed to "
                        + "the dead address (last %s after the kill), %d FAILED_PRECONDITION 'session lost' (first %s "
                        + "after the kill), %d other%n", orphanSessions, orphans.size(), toDead,
                lastToDead == Long.MIN_VALUE ? "-" : Figures.seconds(killAt, lastToDead), sessionLost,
                Figures.seconds(killAt, firstLost), otherOrphan);

        boolean ok = healthyErrors == 0 && transport == 0 && moved.isEmpty() && stoppedFast && p95Delta <= 100
                && otherOrphan == 0 && lostAfterLeaving && sessionLost > 0;
        System.out.printf("VERDICT fault-kill: %s — healthy-session errors %d (target 0), new sessions on dead "
                        + "replicas stopped %s 1 s of the first failed probe, fault p95 %+.2f ms vs steady (target "
                        + "≤ +100 ms), orphaned sessions: routed until the replica left, then 'session lost'%s%n",
                ok ? "PASS" : "FAIL", healthyErrors, stoppedFast ? "within" : "NOT within", p95Delta,
                otherOrphan == 0 && lostAfterLeaving && sessionLost > 0 ? "" : " (NOT as documented)");
        return ok;
    }

    private static int indexOf(List<Replica> dead, String address) {
        for (int i = 0; i < dead.size(); i++) {
            if (dead.get(i).grpcAddress().equals(address)) {
                return i;
            }
        }
        throw new IllegalStateException(address);
    }
}
