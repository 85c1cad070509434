package io.scrouter.extproc.ops;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.NearCache;
import io.scrouter.extproc.session.StoreCallObserver;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The router's Prometheus metrics. Counters and histograms are fed on the request path (lock-free
 * increments); everything about replicas is read from {@link RouterStatus} only when scraped.
 * The request-path series carry no exemplars: the router has no tracer to take them from, and with exemplars
 * on, every increment would still try to sample one and hand the client library's scheduler thread a timer
 * (about ten wake-ups a second per series, on the cores the event loops use).
 * Names follow Prometheus conventions: {@code scrouter_} prefix, base units, {@code _total} on counters.
 */
public final class RouterMetrics implements DecisionObserver, StoreCallObserver {

    /** Decision latency buckets: the interesting range is 10 µs to Envoy's 200 ms message timeout. */
    private static final double[] DECISION_BUCKETS = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
            0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.5};
    private static final double[] REDIS_BUCKETS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05, 0.1, 0.25, 1};
    private static final String[] STATES = {"ready", "warming", "draining"};

    private final PrometheusRegistry registry;
    private final Counter decisions;
    private final Histogram decisionSeconds;
    private final Counter clientRouteHeader;
    private final Histogram redisSeconds;
    private final Counter redisErrors;

    public RouterMetrics(Supplier<RouterStatus> statusSource) {
        this.registry = new PrometheusRegistry();
        BuildInfo.register(registry);
        StatusView status = new StatusView(statusSource);
        decisions = Counter.builder().name("scrouter_decisions_total")
                .help("Routing decisions by outcome (known, placed, placed_degraded, fallback, rejected) and "
                        + "rejection reason")
                .labelNames("outcome", "reason").withoutExemplars().register(registry);
        decisionSeconds = Histogram.builder().name("scrouter_decision_duration_seconds")
                .help("Time from Envoy's request headers to the router's answer").unit(Unit.SECONDS)
                .classicUpperBounds(DECISION_BUCKETS).classicOnly().labelNames("outcome").withoutExemplars()
                .register(registry);
        clientRouteHeader = Counter.builder().name("scrouter_client_route_header_total")
                .help("Requests that arrived carrying the route header themselves (overwritten; a sign that "
                        + "Envoy's header removal is missing)").withoutExemplars().register(registry);
        redisSeconds = Histogram.builder().name("scrouter_store_call_duration_seconds")
                .help("Session-store (Redis) call latency by operation").unit(Unit.SECONDS)
                .classicUpperBounds(REDIS_BUCKETS).classicOnly().labelNames("operation").withoutExemplars()
                .register(registry);
        redisErrors = Counter.builder().name("scrouter_store_errors_total")
                .help("Session-store (Redis) calls that failed or timed out, by operation")
                .labelNames("operation").withoutExemplars().register(registry);

        // No hit-ratio gauge: since start it says little about now, and it read 1.0 before any lookup. The
        // dashboard divides the rates of these two series over its own window.
        CounterWithCallback.builder().name("scrouter_near_cache_requests_total")
                .help("Near-cache lookups by result (hit, miss)").labelNames("result")
                .callback(cb -> {
                    NearCache n = status.nearCache();
                    cb.call(n.hitCount(), "hit");
                    cb.call(n.missCount(), "miss");
                }).register(registry);
        GaugeWithCallback.builder().name("scrouter_near_cache_sessions")
                .help("Sessions held in this router's near-cache")
                .callback(cb -> cb.call(status.nearCache().size())).register(registry);
        GaugeWithCallback.builder().name("scrouter_pool_replicas")
                .help("Replicas in the pool by state").labelNames("state")
                .callback(cb -> {
                    var views = status.replicas();
                    for (String state : STATES) {
                        cb.call(views.stream().filter(v -> v.state().equals(state)).count(), state);
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("scrouter_degraded_placement")
                .help("1 while new sessions are placed without load figures (no replica has fresh metrics)")
                .callback(cb -> cb.call(status.degraded() ? 1 : 0)).register(registry);
        GaugeWithCallback.builder().name("scrouter_store_circuit_open")
                .help("1 while the session store is bypassed after repeated failures (rendezvous fallback)")
                .callback(cb -> cb.call(status.storeCircuitOpen() ? 1 : 0)).register(registry);
        GaugeWithCallback.builder().name("scrouter_pool_read_age_seconds")
                .help("Seconds since the instance store was last read successfully")
                .callback(cb -> {
                    long age = status.poolReadAgeMillis();
                    if (age >= 0) {
                        cb.call(age / 1000.0);
                    }
                }).register(registry);

        GaugeWithCallback.builder().name("scrouter_replica_state")
                .help("1 for the replica's current state").labelNames("replica", "state")
                .callback(cb -> status.replicas().forEach(v -> {
                    for (String state : STATES) {
                        cb.call(v.state().equals(state) ? 1 : 0, v.id(), state);
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("scrouter_replica_utilisation_ratio")
                .help("Smoothed (active + pending) / slots from Spark's REST API").labelNames("replica")
                .callback(cb -> status.replicas().forEach(v -> {
                    if (!Double.isNaN(v.utilisation())) {
                        cb.call(v.utilisation(), v.id());
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("scrouter_replica_score")
                .help("Placement score under the configured policy (lower wins); absent when not fresh")
                .labelNames("replica")
                .callback(cb -> status.replicas().forEach(v -> {
                    if (!Double.isNaN(v.score())) {
                        cb.call(v.score(), v.id());
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("scrouter_replica_active_sessions")
                .help("Live sessions bound to the replica").labelNames("replica")
                .callback(cb -> status.replicas().forEach(v -> cb.call(v.activeSessions(), v.id())))
                .register(registry);
        GaugeWithCallback.builder().name("scrouter_replica_sample_age_seconds")
                .help("Age of the replica's last successful load sample").labelNames("replica")
                .callback(cb -> status.replicas().forEach(v -> {
                    if (v.sampleAgeMillis() >= 0) {
                        cb.call(v.sampleAgeMillis() / 1000.0, v.id());
                    }
                })).register(registry);
        GaugeWithCallback.builder().name("scrouter_replica_fresh")
                .help("1 if the replica's load sample is fresh enough to be offered new sessions")
                .labelNames("replica")
                .callback(cb -> status.replicas().forEach(v -> cb.call(v.fresh() ? 1 : 0, v.id())))
                .register(registry);
        GaugeWithCallback.builder().name("scrouter_replica_group")
                .help("1 for the replica group each replica serves (join on replica to see other series by group)")
                .labelNames("replica", "group")
                .callback(cb -> status.replicas().forEach(v -> cb.call(1, v.id(), v.group()))).register(registry);
        GaugeWithCallback.builder().name("scrouter_group_active_sessions")
                .help("Live sessions bound to the replicas of each replica group").labelNames("group")
                .callback(cb -> status.groups().forEach(g -> cb.call(g.activeSessions(), g.group())))
                .register(registry);
        GaugeWithCallback.builder().name("scrouter_group_ready_replicas")
                .help("Replicas of each group that take new sessions").labelNames("group")
                .callback(cb -> status.groups().forEach(g -> cb.call(g.readyReplicas(), g.group())))
                .register(registry);
        GaugeWithCallback.builder().name("scrouter_group_utilisation_ratio")
                .help("Mean smoothed utilisation of each group's replicas with a fresh load sample")
                .labelNames("group")
                .callback(cb -> status.groups().forEach(g -> {
                    if (!Double.isNaN(g.utilisation())) {
                        cb.call(g.utilisation(), g.group());
                    }
                })).register(registry);
        CounterWithCallback.builder().name("scrouter_group_full_total")
                .help("New sessions refused (RESOURCE_EXHAUSTED) because every replica their group may use was at "
                        + "its maxSessionsPerReplica cap, by request group")
                .labelNames("group")
                .callback(cb -> status.groups().forEach(g -> {
                    if (g.fullRefusals() > 0) {
                        cb.call(g.fullRefusals(), g.group());
                    }
                })).register(registry);
        CounterWithCallback.builder().name("scrouter_replica_probe_failures_total")
                .help("Failed or timed-out load probes since the replica joined the pool").labelNames("replica")
                .callback(cb -> status.replicas().forEach(v -> cb.call(v.probeFailures(), v.id())))
                .register(registry);
        Map<Decision.Outcome, Cells> cells = new EnumMap<>(Decision.Outcome.class);
        for (Decision.Outcome o : Decision.Outcome.values()) {
            String outcome = o.name().toLowerCase(Locale.ROOT);
            cells.put(o, new Cells(decisions.labelValues(outcome, ""), decisionSeconds.labelValues(outcome)));
        }
        this.routeCells = cells;
    }

    /** Reads through to the status at scrape time; empty until the router is wired. */
    private record StatusView(Supplier<RouterStatus> source) {
        List<ReplicaView> replicas() {
            RouterStatus s = source.get();
            return s == null ? List.of() : s.replicas();
        }

        List<GroupView> groups() {
            RouterStatus s = source.get();
            return s == null ? List.of() : s.groups();
        }

        NearCache nearCache() {
            return source.get().nearCache();
        }

        boolean degraded() {
            RouterStatus s = source.get();
            return s != null && s.degraded();
        }

        boolean storeCircuitOpen() {
            RouterStatus s = source.get();
            return s != null && s.storeCircuitOpen();
        }

        long poolReadAgeMillis() {
            RouterStatus s = source.get();
            return s == null ? -1 : s.poolReadAgeMillis();
        }
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    /** The counter and histogram cells of one outcome, looked up once instead of per request. */
    private record Cells(CounterDataPoint count,
                         DistributionDataPoint latency) {
    }

    private final Map<Decision.Outcome, Cells> routeCells;
    private final ConcurrentHashMap<String, Cells> rejectCells =
            new ConcurrentHashMap<>();


    @Override
    public void decided(Decision decision, long elapsedNanos, boolean clientSetUpstream) {
        Cells cells;
        if (decision instanceof Decision.Route route) {
            cells = routeCells.get(route.outcome());
        } else {
            // Reasons are a small fixed set of constants in Rejections, so this map stays tiny.
            cells = rejectCells.computeIfAbsent(((Decision.Reject) decision).reason(),
                    reason -> new Cells(decisions.labelValues("rejected", reason),
                            decisionSeconds.labelValues("rejected")));
        }
        cells.count().inc();
        cells.latency().observe(elapsedNanos / 1e9);
        if (clientSetUpstream) {
            clientRouteHeader.inc();
        }
    }

    @Override
    public void completed(String operation, long elapsedNanos, Throwable error) {
        redisSeconds.labelValues(operation).observe(elapsedNanos / 1e9);
        if (error != null) {
            redisErrors.labelValues(operation).inc();
        }
    }
}
