package io.scrouter.extproc.publisher;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import io.scrouter.extproc.ops.BuildInfo;
import io.scrouter.extproc.pool.ReplicaState;

import java.time.Duration;

/**
 * The publisher's own metrics, so that a publisher that runs but no longer renews (Redis unreachable from
 * its pod, a wrong password) is visible before routers drop its replica. The alert compares the age of the
 * last renewal with the entry's ttl; both are exported, so the rule needs no copy of the flags.
 */
public final class PublisherMetrics {

    private static final ReplicaState[] STATES = ReplicaState.values();

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter renewals;
    private final Gauge lastRenewal;
    private final Gauge state;
    private final String replica;

    public PublisherMetrics(String replica, Duration ttl, Duration interval) {
        this.replica = replica;
        BuildInfo.register(registry);
        renewals = Counter.builder().name("scrouter_publisher_renewals_total")
                .help("Renewals of the replica's instance-store entry, by result (ok, failed)")
                .labelNames("replica", "result").register(registry);
        // Both results exist from the start, so a rate over a publisher that never succeeded is 0, not absent.
        renewals.initLabelValues(replica, "ok");
        renewals.initLabelValues(replica, "failed");
        lastRenewal = Gauge.builder().name("scrouter_publisher_last_renewal_timestamp_seconds")
                .help("Unix time of the last successful renewal").unit(Unit.SECONDS).labelNames("replica")
                .register(registry);
        Gauge.builder().name("scrouter_publisher_entry_ttl_seconds")
                .help("Expiry of the entry after a renewal (--ttl): routers drop the replica this long after the "
                        + "last one").unit(Unit.SECONDS).labelNames("replica").register(registry)
                .labelValues(replica).set(ttl.toMillis() / 1000.0);
        Gauge.builder().name("scrouter_publisher_renewal_interval_seconds")
                .help("Time between renewals (--interval)").unit(Unit.SECONDS).labelNames("replica")
                .register(registry).labelValues(replica).set(interval.toMillis() / 1000.0);
        state = Gauge.builder().name("scrouter_publisher_state")
                .help("1 for the state last published (ready, warming, draining)").labelNames("replica", "state")
                .register(registry);
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    /** A renewal succeeded and published {@code published}. */
    public void renewed(ReplicaState published, long epochMillis) {
        renewals.labelValues(replica, "ok").inc();
        lastRenewal.labelValues(replica).set(epochMillis / 1000.0);
        for (ReplicaState s : STATES) {
            state.labelValues(replica, s.wireName()).set(s == published ? 1 : 0);
        }
    }

    /** A renewal failed or timed out. */
    public void renewalFailed() {
        renewals.labelValues(replica, "failed").inc();
    }
}
