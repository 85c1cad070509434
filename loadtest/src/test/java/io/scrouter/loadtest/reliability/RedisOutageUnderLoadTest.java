package io.scrouter.loadtest.reliability;

import io.grpc.Status;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.RouterCounters;
import io.scrouter.loadtest.reliability.LocalCluster;
import io.scrouter.loadtest.traffic.TrafficDriver;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Short version of the Redis fault tests (the 30-second ones are in loadtest/): under traffic from two
 * routers, Redis first hangs (SIGSTOP) and then dies and comes back empty. The hang takes effect (both
 * routers' breakers open, new sessions are placed by rendezvous); every request is answered with a route or a
 * retryable status; no session changes replica except the few the README allows per outage; and after Redis
 * returns, every session placed while it was away is written back, so the store and the routers agree again.
 */
class RedisOutageUnderLoadTest {

    /**
     * README, "When things fail", "A session created just before Redis hangs": such a session may move. How many may is
     * {@link #movesAllowedPerOutage}. In 13 runs of this test (2026-12-06, about 100-200 new sessions a second) 0-1
     * moved per hang with the default window and 0-2 with 5 ms, 0.38 per hang on average either way, and none at
     * Redis's death; on 2026-12-07 one run at 123 new sessions a second had 3 move at a hang with 5 ms.
     */
    private static final int MIN_MOVES_ALLOWED_PER_OUTAGE = 2;
    /** A binding's own round trip to Redis on loopback, with room: a bind Redis ran just before it stopped. */
    private static final Duration BIND_ROUND_TRIP = Duration.ofMillis(2);
    /** Chance sets how many of the exposed sessions are opened, and which of them move: four times the mean. */
    private static final int MARGIN_FOR_CHANCE = 4;

    /**
     * The sessions whose binding may be stuck in Redis when it stops, unannounced to the other router: those Redis
     * bound within the gather window (their announcement waiting), the fault's signal and one bind's round trip before
     * it stopped, at the rate the traffic opened sessions, with a margin for chance. Any of them may move, if its next
     * request reaches the other router before Redis is back; an exposure wider than the gather window would show as
     * more.
     */
    static int movesAllowedPerOutage(double newSessionsPerSecond, Duration followUpGather, Fault fault) {
        double exposedSeconds = (followUpGather.toNanos() + (fault.toNanos() - fault.fromNanos())
                + BIND_ROUND_TRIP.toNanos()) / 1e9;
        return Math.max(MIN_MOVES_ALLOWED_PER_OUTAGE,
                (int) Math.ceil(MARGIN_FOR_CHANCE * newSessionsPerSecond * exposedSeconds));
    }

    /** When a fault was injected: from just before the signal to just after it took effect (Redis stopped or gone). */
    private record Fault(String name, long fromNanos, long toNanos) {
    }

    /**
     * With the default follow-up gather window (1 ms), and with the 5 ms that loadtest/README.md measured as the
     * cheaper setting for two routers: the README states the exposure of each.
     */
    @ParameterizedTest(name = "redis.followUpGather {0}")
    @ValueSource(strings = {"default", "5ms"})
    void hungThenDeadRedisMovesNoSessionAndRoutersAgreeAfterwards(String gather) throws Exception {
        String redisSettings = gather.equals("default") ? "" : "followUpGather: " + gather;
        String routerYaml = """
                pool: {pollInterval: 200ms}
                probe: {interval: 200ms, timeout: 300ms, staleAfter: 3s}
                sessions: {idleTtl: 10m, refreshEvery: 300ms}
                """;
        try (LocalCluster cluster = new LocalCluster(4, Duration.ofSeconds(4), routerYaml)) {
            RouterServer a = cluster.startRouter(redisSettings);
            RouterServer b = cluster.startRouter(redisSettings);
            RouterConfig config = a.config();
            Duration redisTimeout = config.redis().orElseThrow().timeout();
            Duration followUpGather = config.redis().orElseThrow().followUpGather();
            Await.until("fresh samples", Patience.probeRound(config), () -> cluster.replicas().stream().allMatch(r ->
                    a.board().isFresh(r.id(), System.currentTimeMillis())
                            && b.board().isFresh(r.id(), System.currentTimeMillis())));
            Duration trafficBound = Patience.storeReturn(config).plus(Patience.breakerOpens(config))
                    .plus(Patience.writeBacks(config, 1000)).multipliedBy(4);
            try (TrafficDriver traffic = new TrafficDriver(List.of(cluster.envoyFor(a), cluster.envoyFor(b)),
                    40, 4, 6, trafficBound, 300_000, true, Patience.decision(config))) {
                traffic.awaitCompleted("steady traffic", 600);

                double fallbacksA = RouterCounters.decisions(a, Decision.Outcome.FALLBACK);
                double fallbacksB = RouterCounters.decisions(b, Decision.Outcome.FALLBACK);
                long hangFrom = System.nanoTime();
                cluster.redis().pause();
                Fault hang = new Fault("hang", hangFrom, System.nanoTime());
                long beforeHang = traffic.completed();
                // The SIGSTOP took effect: calls time out until both breakers open...
                Await.until("both routers' store breakers open while Redis hangs", Patience.breakerOpens(config),
                        () -> a.routing().store().breakerOpen() && b.routing().store().breakerOpen());
                traffic.awaitCompleted("traffic while Redis hangs", beforeHang + 600);
                // ...and new sessions are then placed by rendezvous, by both routers.
                assertThat(RouterCounters.decisions(a, Decision.Outcome.FALLBACK)).as("fallback decisions, router a")
                        .isGreaterThan(fallbacksA);
                assertThat(RouterCounters.decisions(b, Decision.Outcome.FALLBACK)).as("fallback decisions, router b")
                        .isGreaterThan(fallbacksB);
                cluster.redis().resume();
                long resumedAt = System.nanoTime();

                // Every session placed while Redis hung is written to it once it is back, as routed. "While it
                // hung": first routed by a request that began once Redis was stopped, so only rendezvous placed
                // it, alike on both routers. A session first routed while the signal was on its way was bound by
                // Redis; if the other router did not hear of it before the hang, it may move, and the store then
                // ends with either replica: such sessions are held to the edge allowance below instead.
                Map<String, String> placedDuringHang = lastRoutes(traffic.results(), firstRouted(traffic.results(),
                        hang.toNanos(), resumedAt));
                assertThat(placedDuringHang).as("sessions placed while Redis hung").isNotEmpty();
                awaitStoreHolds(cluster, placedDuringHang, "placements made while Redis hung",
                        Patience.storeReturn(config).plus(Patience.writeBacks(config, placedDuringHang.size())));
                traffic.awaitCompleted("traffic after resume", beforeHang + 1200);

                long killFrom = System.nanoTime();
                cluster.redis().kill();
                Fault death = new Fault("death", killFrom, System.nanoTime());
                long beforeKill = traffic.completed();
                traffic.awaitCompleted("traffic while Redis is dead", beforeKill + 600);
                cluster.redis().restart();
                long restartedAt = System.nanoTime();
                traffic.awaitCompleted("traffic after restart", beforeKill + 1500);
                traffic.close();

                List<TrafficDriver.Result> all = traffic.results();
                assertThat(all).noneMatch(r -> r.grpcStatus() == -2);
                // Routed, or asked to retry while the store blips; nothing else.
                assertThat(all).allMatch(r -> r.upstream() != null
                        || r.grpcStatus() == Status.Code.UNAVAILABLE.value());
                Set<String> moved = TrafficDriver.movedSessions(all);
                long sessions = all.stream().map(TrafficDriver.Result::session).distinct().count();
                printTimeline(all, moved, hang, resumedAt, death, restartedAt);
                long spanNanos = all.stream().mapToLong(TrafficDriver.Result::atNanos).max().orElseThrow()
                        - all.stream().mapToLong(TrafficDriver.Result::atNanos).min().orElseThrow();
                long opened = all.stream().filter(TrafficDriver.Result::newSession).map(TrafficDriver.Result::session)
                        .distinct().count();
                double newSessionsPerSecond = opened * 1e9 / Math.max(1, spanNanos);
                // The one documented way a session can move (README, "When things fail"): it was bound in the
                // last moments before Redis hung or died, so its announcement to the other router was stuck in
                // Redis. A bind still in flight when the fault hit is at most one Redis deadline old, and its
                // announcement waited up to the gather window more; at most movesAllowedPerOutage such sessions
                // per outage; every other session stays put.
                Map<Fault, Set<String>> movedAtEdge = new HashMap<>();
                Map<Fault, Integer> allowed = new HashMap<>();
                for (Fault f : List.of(hang, death)) {
                    Set<String> nearFault = all.stream().filter(TrafficDriver.Result::newSession)
                            .filter(r -> r.atNanos() >= f.fromNanos() - redisTimeout.toNanos()
                                    - followUpGather.toNanos()
                                    && r.atNanos() <= f.toNanos() + redisTimeout.toNanos())
                            .map(TrafficDriver.Result::session).collect(Collectors.toSet());
                    nearFault.retainAll(moved);
                    movedAtEdge.put(f, nearFault);
                    int movesAllowed = movesAllowedPerOutage(newSessionsPerSecond, followUpGather, f);
                    allowed.put(f, movesAllowed);
                    assertThat(nearFault).as("sessions bound at the edge of the Redis %s that moved (at %.0f new "
                                    + "sessions a second)", f.name(), newSessionsPerSecond)
                            .hasSizeLessThanOrEqualTo(movesAllowed);
                }
                Set<String> movedOtherwise = new HashSet<>(moved);
                movedAtEdge.values().forEach(movedOtherwise::removeAll);
                assertThat(movedOtherwise).as("sessions routed to two different replicas").isEmpty();
                // New sessions were placed while Redis was away.
                assertThat(traffic.between(hang.fromNanos(), resumedAt)).filteredOn(TrafficDriver.Result::newSession)
                        .anyMatch(r -> r.upstream() != null);
                assertThat(traffic.between(death.fromNanos(), restartedAt)).filteredOn(TrafficDriver.Result::newSession)
                        .anyMatch(r -> r.upstream() != null);

                // Redis came back empty; the routers wrote back every session they hold, including each one
                // placed while Redis was dead. (Moved sessions are reported above, not checked here.)
                Map<String, String> routed = lastRoutes(all, firstRouted(all, 0, Long.MAX_VALUE));
                routed.keySet().removeAll(moved);
                Map<String, String> placedWhileDead = lastRoutes(all, firstRouted(all, death.fromNanos(), restartedAt));
                assertThat(placedWhileDead).as("sessions placed while Redis was dead").isNotEmpty();
                awaitStoreHolds(cluster, routed, "every routed session, after Redis restarted empty",
                        Patience.storeReturn(config).plus(Patience.writeBacks(config, routed.size())));

                long retries = all.stream().filter(r -> r.upstream() == null).count();
                System.out.printf("redis outage, followUpGather %d ms: %d requests, %d sessions, %d moved (%d at "
                                + "the hang's edge, %d at the death's edge), %d answered 'retry', %d placed during the hang and %d while dead "
                                + "written back; decision p99 steady %.2f ms, hung %.2f ms, dead %.2f ms%n",
                        followUpGather.toMillis(), all.size(), sessions, moved.size(), movedAtEdge.get(hang).size(),
                        movedAtEdge.get(death).size(), retries, placedDuringHang.size(), placedWhileDead.size(),
                        TrafficDriver.percentileMillis(traffic.between(0, hang.fromNanos()), 0.99),
                        TrafficDriver.percentileMillis(traffic.between(hang.fromNanos(), resumedAt), 0.99),
                        TrafficDriver.percentileMillis(traffic.between(death.fromNanos(), restartedAt), 0.99));
                System.out.printf("redis outage: %.0f new sessions a second over %.1f s of traffic; moves allowed "
                        + "at the hang %d, at the death %d%n", newSessionsPerSecond, spanNanos / 1e9, allowed.get(hang),
                        allowed.get(death));
            }
        }
    }

    /** Sessions whose first routed request started in [from, to). */
    private static Set<String> firstRouted(List<TrafficDriver.Result> all, long from, long to) {
        Map<String, Long> first = new HashMap<>();
        for (TrafficDriver.Result r : all) {
            if (r.upstream() != null) {
                first.merge(r.session(), r.atNanos(), Math::min);
            }
        }
        return first.entrySet().stream().filter(e -> e.getValue() >= from && e.getValue() < to)
                .map(Map.Entry::getKey).collect(Collectors.toSet());
    }

    /** The address each of {@code sessions} was last routed to. */
    private static Map<String, String> lastRoutes(List<TrafficDriver.Result> all, Set<String> sessions) {
        Map<String, String> last = new HashMap<>();
        all.stream().filter(r -> r.upstream() != null && sessions.contains(r.session()))
                .sorted(Comparator.comparingLong(TrafficDriver.Result::atNanos))
                .forEach(r -> last.put(r.session(), r.upstream()));
        return last;
    }

    /** Waits until Redis binds every session to the replica at the address it was routed to. */
    private static void awaitStoreHolds(LocalCluster cluster, Map<String, String> addressBySession, String what,
                                        Duration within) {
        Map<String, String> idByAddress = cluster.replicas().stream()
                .collect(Collectors.toMap(Replica::grpcAddress, Replica::id));
        Set<String> missing = new HashSet<>(addressBySession.keySet());
        try {
            Await.untilChecked(what + " in Redis", within, () -> {
                for (var it = missing.iterator(); it.hasNext(); ) {
                    String session = it.next();
                    if (idByAddress.get(addressBySession.get(session)).equals(cluster.storedReplicaId(session))) {
                        it.remove();
                    }
                }
                return missing.isEmpty();
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + ": " + missing.size() + " of " + addressBySession.size()
                    + " not written back, e.g. " + missing.stream().limit(3).toList(), e);
        }
    }

    /** On failure, each moved session's requests against the fault timeline. */
    private static void printTimeline(List<TrafficDriver.Result> all, Set<String> moved, Fault hang, long resumedAt,
                                      Fault death, long restartedAt) {
        long t0 = all.stream().mapToLong(TrafficDriver.Result::atNanos).min().orElse(0);
        for (String m : moved.stream().limit(5).toList()) {
            System.out.println("moved " + m + ": hung@" + (hang.fromNanos() - t0) / 1_000_000 + " resumed@"
                    + (resumedAt - t0) / 1_000_000 + " killed@" + (death.fromNanos() - t0) / 1_000_000
                    + " restarted@" + (restartedAt - t0) / 1_000_000);
            all.stream().filter(r -> r.session().equals(m))
                    .sorted(Comparator.comparingLong(TrafficDriver.Result::atNanos))
                    .forEach(r -> System.out.println("   t=" + (r.atNanos() - t0) / 1_000_000 + " router="
                            + r.router() + " -> " + r.upstream() + " status=" + r.grpcStatus()));
        }
    }
}
