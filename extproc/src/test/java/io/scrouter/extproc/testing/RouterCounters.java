package io.scrouter.extproc.testing;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.routing.Decision;

import java.util.Locale;

/**
 * Reads a running router's own counters from its metrics registry (what {@code /metrics} would show), so a
 * fault test can tell which path its decisions took without a scrape over HTTP.
 */
public final class RouterCounters {

    private RouterCounters() {
    }

    /** {@code scrouter_decisions_total{outcome=...}} for a routed outcome. */
    public static double decisions(RouterServer rs, Decision.Outcome outcome) {
        return counter(rs, "scrouter_decisions", "outcome", outcome.name().toLowerCase(Locale.ROOT));
    }

    /** {@code scrouter_client_route_header_total}: requests that arrived carrying the route header. */
    public static double clientRouteHeaders(RouterServer rs) {
        return counter(rs, "scrouter_client_route_header", null, null);
    }

    private static double counter(RouterServer rs, String name, String label, String value) {
        double sum = 0;
        for (MetricSnapshot s : rs.metrics().registry().scrape()) {
            if (s instanceof CounterSnapshot counter && s.getMetadata().getName().equals(name)) {
                for (CounterSnapshot.CounterDataPointSnapshot p : counter.getDataPoints()) {
                    if (label == null || value.equals(p.getLabels().get(label))) {
                        sum += p.getValue();
                    }
                }
            }
        }
        return sum;
    }
}
