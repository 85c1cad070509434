package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Reading a router's own account of a round from its Prometheus page: the lines are written here as the router's
 * metrics library prints them (labels in declared order, counts as floats), not taken from the router.
 */
class RouterViewTest {

    private static final String BEFORE = """
            # HELP scrouter_decisions_total Routing decisions by outcome
            # TYPE scrouter_decisions_total counter
            scrouter_decisions_total{outcome="fallback",reason=""} 10.0
            scrouter_decisions_total{outcome="placed",reason=""} 100.0
            scrouter_decisions_total{outcome="rejected",reason="store_timeout"} 1.0
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="5.0E-4"} 50
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="0.001"} 90
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="0.005"} 100
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="+Inf"} 100
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="5.0E-4"} 10
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="0.001"} 10
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="0.005"} 10
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="+Inf"} 10
            scrouter_store_call_duration_seconds_bucket{operation="find_or_bind",le="5.0E-4"} 40
            scrouter_store_call_duration_seconds_bucket{operation="find_or_bind",le="0.001"} 90
            scrouter_store_call_duration_seconds_bucket{operation="find_or_bind",le="+Inf"} 100
            scrouter_store_call_duration_seconds_bucket{operation="count",le="+Inf"} 7
            """;

    /** 1,000 more placed decisions: 600 within 0.5 ms, 380 more within 1 ms, 15 more within 5 ms, 5 beyond. */
    private static final String AFTER = """
            scrouter_decisions_total{outcome="fallback",reason=""} 10.0
            scrouter_decisions_total{outcome="placed",reason=""} 1100.0
            scrouter_decisions_total{outcome="rejected",reason="store_timeout"} 3.0
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="5.0E-4"} 650
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="0.001"} 1070
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="0.005"} 1095
            scrouter_decision_duration_seconds_bucket{outcome="placed",le="+Inf"} 1100
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="5.0E-4"} 10
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="0.001"} 10
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="0.005"} 10
            scrouter_decision_duration_seconds_bucket{outcome="fallback",le="+Inf"} 10
            scrouter_store_call_duration_seconds_bucket{operation="find_or_bind",le="5.0E-4"} 540
            scrouter_store_call_duration_seconds_bucket{operation="find_or_bind",le="0.001"} 1080
            scrouter_store_call_duration_seconds_bucket{operation="find_or_bind",le="+Inf"} 1100
            """;

    @Test
    void aRoundIsWhatChangedBetweenTwoReadings() {
        RouterView round = RouterView.parse(AFTER).since(RouterView.parse(BEFORE));

        assertThat(round.outcomes()).isEqualTo(Map.of("fallback", 0L, "placed", 1000L, "rejected", 2L));
        assertThat(round.decisions()).isEqualTo(Map.of(0.0005, 600L, 0.001, 980L, 0.005, 995L,
                Double.POSITIVE_INFINITY, 1000L));
        // Other operations' buckets are not find-or-bind's.
        assertThat(round.findOrBind()).isEqualTo(Map.of(0.0005, 500L, 0.001, 990L, Double.POSITIVE_INFINITY, 1000L));
    }

    @Test
    void aQuantileIsBoundedByTheBucketThatHoldsIt() {
        RouterView round = RouterView.parse(AFTER).since(RouterView.parse(BEFORE));

        assertThat(RouterView.formatAtMost(round.decisions(), 0.5)).isEqualTo("≤ 0.5 ms");
        assertThat(RouterView.formatAtMost(round.decisions(), 0.9)).isEqualTo("≤ 1 ms");
        assertThat(RouterView.formatAtMost(round.decisions(), 0.99)).isEqualTo("≤ 5 ms");
        // The 996th of 1,000 decisions lies past the last finite bucket.
        assertThat(RouterView.formatAtMost(round.decisions(), 0.996)).isEqualTo("> 5 ms");
        assertThat(RouterView.formatAtMost(round.findOrBind(), 0.5)).isEqualTo("≤ 0.5 ms");
        assertThat(RouterView.formatAtMost(round.findOrBind(), 0.99)).isEqualTo("≤ 1 ms");
        assertThat(RouterView.formatAtMost(Map.of(), 0.99)).isEqualTo("none");
    }

    @Test
    void onlyAnswersThePolicyPlacedCountAsPlacedByIt() {
        // Round 1: 1,000 req/s, 750 of 1,000 decisions placed (500 placed, 250 placed_degraded), 250 fallback.
        // Round 2: 2,000 req/s, all placed. Round 3: 4,000 req/s, a tenth placed.
        List<Round> rounds = List.of(
                round(0, 1000, Map.of("placed", 500L, "placed_degraded", 250L, "fallback", 250L)),
                round(1, 2000, Map.of("placed", 10L)),
                round(2, 4000, Map.of("placed", 1L, "fallback", 9L)));

        Spread placed = BenchReport.placedByPolicyPerSecond(rounds);

        assertThat(placed.median()).isCloseTo(750, within(1e-9));
        assertThat(placed.min()).isCloseTo(400, within(1e-9));
        assertThat(placed.max()).isCloseTo(2000, within(1e-9));
        assertThat(BenchReport.placedByPolicyPerSecond(List.of(round(0, 1000, Map.of()))))
                .as("rounds without the router's account").isNull();
    }

    private static Round round(int index, double perSecond, Map<String, Long> outcomes) {
        return new Round(Target.ROUTER_REDIS, index, perSecond, 0.1, 1.0, 1, 0, new long[] {1}, null, 0, Map.of(),
                new RouterView(outcomes, Map.of(), Map.of()), CpuTimes.NONE);
    }

    @Test
    void twoRoutersReadTogetherAddUp() {
        RouterView one = RouterView.parse(BEFORE);
        RouterView both = one.plus(one);

        assertThat(both.outcomes()).containsEntry("placed", 200L).containsEntry("fallback", 20L);
        assertThat(both.decisions()).containsEntry(Double.POSITIVE_INFINITY, 220L);
        assertThat(RouterView.NONE.plus(one)).isEqualTo(one);
    }
}
