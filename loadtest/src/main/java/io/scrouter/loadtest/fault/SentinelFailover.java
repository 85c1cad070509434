package io.scrouter.loadtest.fault;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.loadtest.traffic.TrafficDriver.Result;
import io.scrouter.loadtest.traffic.TrafficDriver;
import io.scrouter.testkit.redis.Resp;
import io.scrouter.testkit.redis.SentinelGroup;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Redis failover with Sentinel under load: routers in {@code mode: sentinel} over three sentinels; the master
 * is killed. Reports when the sentinels promoted the replica, when each router first wrote to Redis again,
 * which bindings were lost (routers had them before the kill, the replica never got them: Redis replication is
 * asynchronous), whether any session moved, and whether routers and the new master agree at the end.
 */
@Command(name = "sentinel", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "Redis failover with Sentinel under load: routers in sentinel mode over "
        + "three sentinels, the master killed; when the replica was promoted, when each router wrote again, which "
        + "bindings were lost. Exit status 1 if a session moved or they disagree at the end. Needs redis-server and "
        + "redis-sentinel.")
public final class SentinelFailover implements Callable<Integer> {
    private static final String ROUTER_YAML = """
            pool: {pollInterval: 1s, departureGrace: 5s}
            probe: {interval: 1s, timeout: 1s, staleAfter: 5s}
            sessions: {idleTtl: 30m, refreshEvery: 5s}
            """;

    @Option(names = "--steady-seconds", defaultValue = "20", paramLabel = "N",
            description = "Traffic before the master is killed, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long steadySeconds;

    @Option(names = "--after-seconds", defaultValue = "30", paramLabel = "N",
            description = "Traffic after the kill, 1 to 3600 (default: ${DEFAULT-VALUE}).")
    long afterSeconds;

    @Mixin
    TrafficOptions traffic;

    @Spec
    CommandSpec spec;

    public SentinelFailover() {
    }

    @Override
    public Integer call() throws Exception {
        return run(Bounds.within(spec, "--steady-seconds", steadySeconds, 1, 3600),
                Bounds.within(spec, "--after-seconds", afterSeconds, 1, 3600), traffic.threads(spec),
                traffic.newEvery(spec)) ? 0 : 1;
    }

    private static boolean run(long steady, long after, int threads, int newEvery) throws Exception {
        RedisKeys keys = new RedisKeys("snt");
        try (SentinelGroup group = SentinelGroup.start()) {
            Config rc = new Config();
            rc.setCodec(StringCodec.INSTANCE);
            var sc = rc.useSentinelServers().setMasterName(SentinelGroup.MASTER_NAME).setCheckSentinelsList(false);
            group.sentinelAddresses().forEach(sc::addSentinelAddress);
            RedissonClient admin = Redisson.create(rc);
            String redisYaml = "redis: {mode: sentinel, addresses: [" + group.sentinelAddresses().stream()
                    .map(a -> "\"" + a + "\"").collect(Collectors.joining(", ")) + "], masterName: "
                    + SentinelGroup.MASTER_NAME + ", timeout: 50ms, keyPrefix: snt}";
            try (Rig rig = new Rig(admin, redisYaml, "snt", 8, Duration.ofSeconds(10))) {
                Rig.Fleet fleet = rig.startFleet(2, ROUTER_YAML);
                List<RouterServer> routers = fleet.routers();
                List<Outcomes> outcomes = fleet.outcomes();
                List<ExtProcClient> envoys = fleet.envoys();
                System.out.printf("sentinel: master :%d, replica :%d, sentinels %s (quorum 2, down-after 1000 ms, "
                                + "failover-timeout 5000 ms); 2 routers in sentinel mode, 8 replicas, %d traffic loops; "
                                + "%d s steady, kill -9 the master, %d s after%n", group.master().port(),
                        group.replica().port(), group.sentinelAddresses(), threads, steady, after);
                Map<String, String> idByAddress = rig.replicas().stream()
                        .collect(Collectors.toMap(Replica::grpcAddress, Replica::id));
                try (FaultTraffic traffic = new FaultTraffic(envoys, threads, 50, newEvery, steady + after + 60,
                        50_000_000L)) {
                    long start = traffic.startNanos();
                    Thread.sleep(TimeUnit.SECONDS.toMillis(steady));
                    // A sentinel in TILT mode (the machine stalled) would not fail over a master killed now.
                    group.awaitNoTilt(Duration.ofSeconds(10));
                    long killAt = System.nanoTime();
                    group.master().kill();
                    // Replication stopped with the master: what the replica holds now is what it will serve once
                    // promoted. Nothing writes to it before then (replicas are read-only).
                    Set<String> onReplica = sessionKeys(group.replica().port(), keys);
                    List<Result> beforeKill = traffic.results().stream()
                            .filter(r -> r.upstream() != null && r.atNanos() + r.nanos() < killAt).toList();
                    Map<String, String> believed = new HashMap<>();
                    beforeKill.forEach(r -> believed.putIfAbsent(r.session(), idByAddress.get(r.upstream())));
                    Set<String> lost = new HashSet<>();
                    believed.forEach((session, replica) -> {
                        if (!onReplica.contains(session)) {
                            lost.add(session);
                        }
                    });
                    // Promotion as the sentinels report it; the first router write as the new master sees it: a
                    // new session key raises its key count (replica renewals only rewrite existing keys).
                    long keysAtKill = (Long) Resp.command(group.replica().port(), "DBSIZE");
                    long promotedAt = Long.MAX_VALUE;
                    long firstWriteAt = Long.MAX_VALUE;
                    long watchBy = killAt + TimeUnit.SECONDS.toNanos(30);
                    while (System.nanoTime() < watchBy
                            && (promotedAt == Long.MAX_VALUE || firstWriteAt == Long.MAX_VALUE)) {
                        if (promotedAt == Long.MAX_VALUE && group.reportedMasterPort() == group.replica().port()) {
                            promotedAt = System.nanoTime();
                        }
                        if (firstWriteAt == Long.MAX_VALUE
                                && (Long) Resp.command(group.replica().port(), "DBSIZE") > keysAtKill) {
                            firstWriteAt = System.nanoTime();
                        }
                        Thread.sleep(10);
                    }
                    Thread.sleep(Math.max(0, TimeUnit.SECONDS.toMillis(after)
                            - (System.nanoTime() - killAt) / 1_000_000));
                    traffic.close();
                    long end = System.nanoTime();
                    Set<String> onNewMaster = sessionKeys(group.replica().port(), keys);
                    long restored = lost.stream().filter(onNewMaster::contains).count();
                    Agreement.Gap gap = Agreement.check(routers, traffic.sessions(), admin, keys);
                    List<Result> all = traffic.results();

                    long faultEnd = promotedAt == Long.MAX_VALUE ? end : promotedAt + TimeUnit.SECONDS.toNanos(2);
                    List<Result> steadyWindow = FaultTraffic.between(all, start + TimeUnit.SECONDS.toNanos(5), killAt);
                    List<Result> failover = FaultTraffic.between(all, killAt, faultEnd);
                    List<Result> recovered = FaultTraffic.between(all, faultEnd, end);
                    Set<String> moved = TrafficDriver.movedSessions(all);
                    Set<String> placedDifferently = Figures.placedDifferently(all);
                    long movedLost = moved.stream().filter(lost::contains).count();
                    long transport = Figures.withStatus(all, Figures.TRANSPORT_ERROR);

                    System.out.println();
                    System.out.printf("sentinels promoted the replica %s after the kill%n",
                            Figures.seconds(killAt, promotedAt));
                    System.out.printf("first successful router write to the new master (a new session key): %s after "
                                    + "the kill, %s after the promotion%n", Figures.seconds(killAt, firstWriteAt),
                            firstWriteAt == Long.MAX_VALUE || promotedAt == Long.MAX_VALUE ? "-"
                                    : String.format("%.2f s", (firstWriteAt - promotedAt) / 1e9));
                    boolean followed = promotedAt != Long.MAX_VALUE && firstWriteAt != Long.MAX_VALUE;
                    for (int r = 0; r < routers.size(); r++) {
                        long firstWrite = outcomes.get(r).first("placed", killAt);
                        followed &= firstWrite != Long.MAX_VALUE;
                        // Placement stays on rendezvous for redis.settleAfterOutage (5 s) after the store's last
                        // failure, so routers agree while they may disagree about the store's health.
                        System.out.printf("router %d: load-aware placement resumed (first PLACED decision) %s after "
                                        + "the kill, %s after the promotion; fallback (rendezvous) decisions during "
                                        + "the failover: %d%n", r, Figures.seconds(killAt, firstWrite),
                                firstWrite == Long.MAX_VALUE || promotedAt == Long.MAX_VALUE ? "-"
                                        : String.format("%.2f s", (firstWrite - promotedAt) / 1e9),
                                outcomes.get(r).count("fallback", killAt, faultEnd));
                    }
                    System.out.printf("decision p50 / p95 / p99 (ms): steady %s (%d req); kill to promotion + 2 s %s "
                                    + "(%d req); after %s (%d req)%n", Figures.quantiles(steadyWindow),
                            steadyWindow.size(), Figures.quantiles(failover), failover.size(),
                            Figures.quantiles(recovered), recovered.size());
                    System.out.printf("refusals by status: during the failover %s; over the run %s%n",
                            Figures.refusals(failover), Figures.refusals(all));
                    System.out.printf("bindings lost in the failover: %d of %d sessions routed before the kill were "
                                    + "not on the replica that became master; %d of them were written back by the "
                                    + "routers by the end, %d of them moved%n", lost.size(), believed.size(), restored,
                            movedLost);
                    System.out.printf("sessions moved over the run: %d; sessions the two routers placed differently: "
                                    + "%d; at the end %d of %d sessions differ between the routers and the new master%n",
                            moved.size(), placedDifferently.size(), gap.total(), gap.checked());
                    boolean ok = followed && moved.isEmpty() && transport == 0;
                    System.out.printf("VERDICT sentinel: %s — routers %s the new master, %d bindings lost, %d sessions "
                                    + "moved (target 0)%n", ok ? "PASS" : "FAIL", followed ? "followed" : "did NOT follow",
                            lost.size(), moved.size());
                    return ok;
                }
            } finally {
                admin.shutdown();
            }
        }
    }

    /** Session ids whose binding key the given server holds (KEYS is fine: a few thousand keys, a test server). */
    private static Set<String> sessionKeys(int port, RedisKeys keys) throws Exception {
        String prefix = keys.session("");
        Object reply = Resp.command(port, "KEYS", prefix + "*");
        Set<String> out = new HashSet<>();
        for (Object k : (List<?>) reply) {
            out.add(String.valueOf(k).substring(prefix.length()));
        }
        return out;
    }
}
