package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The arithmetic the benchmark's tables rest on: medians and ranges, ratios, Redis counters, Envoy's picker. */
class BenchFiguresTest {

    @Test
    void spreadIsMedianAndRange() {
        Spread odd = Spread.of(List.of(3.0, 1.0, 2.0));
        assertThat(odd.median()).isEqualTo(2.0);
        assertThat(odd.min()).isEqualTo(1.0);
        assertThat(odd.max()).isEqualTo(3.0);
        assertThat(Spread.of(List.of(4.0, 1.0, 2.0, 3.0)).median()).isEqualTo(2.5);
        assertThat(odd.format("%.1f")).isEqualTo("2.0 [1.0–3.0]");
        assertThat(Spread.of(List.of()).format("%.1f")).isEqualTo("–");
    }

    @Test
    void ratiosPairRoundsOfTheSameIndex() {
        Block b = new Block(SessionMix.KNOWN, 32, 1);
        double[] noop = {1000, 2000, 1000};
        double[] router = {900, 1000, 800};
        for (int i = 0; i < 3; i++) {
            b.add(new Round(Target.NOOP, i, noop[i], 0.1, 1.0, 1, 0, new long[] {1}, null, 0, java.util.Map.of(), RouterView.NONE));
            b.add(new Round(Target.ROUTER_REDIS, i, router[i], 0.1, 1.0 + i, 1, 0, new long[] {1}, null, 0, java.util.Map.of(), RouterView.NONE));
        }
        Spread tp = b.throughputRatio(Target.ROUTER_REDIS);
        assertThat(tp.median()).isCloseTo(0.8, within(1e-9));
        assertThat(tp.min()).isCloseTo(0.5, within(1e-9));
        assertThat(tp.max()).isCloseTo(0.9, within(1e-9));
        assertThat(b.p99Ratio(Target.ROUTER_REDIS).max()).isCloseTo(3.0, within(1e-9));
    }

    @Test
    void redisCountersAreDifferencedPerCommand() {
        RedisCommandStats before = RedisCommandStats.parse("""
                # Commandstats\r
                cmdstat_evalsha:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r
                cmdstat_ping:calls=5,usec=5,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r
                # CPU\r
                used_cpu_sys:1.500000\r
                used_cpu_user:2.000000\r
                """);
        RedisCommandStats after = RedisCommandStats.parse("""
                cmdstat_evalsha:calls=110,usec=1100,usec_per_call=10.00,rejected_calls=0,failed_calls=0
                cmdstat_ping:calls=5,usec=5,usec_per_call=1.00,rejected_calls=0,failed_calls=0
                cmdstat_xadd:calls=100,usec=300,usec_per_call=3.00,rejected_calls=0,failed_calls=0
                used_cpu_sys:2.000000
                used_cpu_user:2.250000
                """);
        RedisCommandStats d = after.since(before);
        assertThat(d.calls()).containsOnlyKeys("evalsha", "xadd").containsEntry("evalsha", 100L)
                .containsEntry("xadd", 100L);
        assertThat(d.totalCalls()).isEqualTo(200);
        assertThat(d.cpuSeconds()).isCloseTo(0.75, within(1e-9));
    }

    @Test
    void leastRequestKeepsTheFirstDrawUnlessALaterOneHasFewerInFlight() {
        LeastRequest lr = new LeastRequest(2, 2);
        Deque<Integer> draws = new ArrayDeque<>(List.of(0, 1, 0, 1, 1, 0, 1, 1));
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(0); // tie: first draw
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(1); // 1 has fewer
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(1); // tie again (1 and 1): first draw
        lr.done(1);
        lr.done(1);
        assertThat(lr.inFlight(0)).isEqualTo(1);
        assertThat(lr.inFlight(1)).isEqualTo(0);
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(1); // both draws are 1
    }

    @Test
    void freshSessionsAreVersion4UuidsTheRouterAccepts() {
        for (int i = 0; i < 1000; i++) {
            String s = SessionMix.fresh();
            UUID u = UUID.fromString(s);
            assertThat(u.version()).isEqualTo(4);
            assertThat(u.variant()).isEqualTo(2);
            assertThat(io.scrouter.extproc.routing.SessionIds.isValid(s)).isTrue();
        }
    }

    @Test
    void jmapHistogramIsParsedPerClass() {
        RedisHeapBench.Histogram h = RedisHeapBench.parseHistogram("""
                 num     #instances         #bytes  class name (module)
                -------------------------------------------------------
                   1:        100000        4800000  [B (java.base@17.0.15)
                   2:         50000        1200000  io.scrouter.extproc.routing.CachedBinding
                Total        150000        6000000
                """);
        assertThat(h.totalBytes()).isEqualTo(6_000_000);
        assertThat(h.classes().get("[B")).containsExactly(100000, 4800000);
        assertThat(h.classes().get("io.scrouter.extproc.routing.CachedBinding")).containsExactly(50000, 1200000);
    }

    @Test
    void gcPausesAreReadFromTheGcLog() {
        List<Double> pauses = GcPauses.millis("""
                [0.012s][info][gc] Using G1
                [3.101s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->6M(1024M) 4.321ms
                [9.500s][info][gc] GC(1) Pause Young (Concurrent Start) (Metadata GC Threshold) 40M->9M(1024M) 12ms
                [9.600s][info][gc] GC(2) Concurrent Mark Cycle 55.000ms
                [9.700s][info][gc] GC(2) Pause Remark 20M->20M(1024M) 1.500ms
                """);
        assertThat(pauses).containsExactly(4.321, 12.0, 1.5);
        assertThat(GcPauses.millis("[0.007s][info][gc] Using Serial")).isEmpty();
        assertThat(GcPauses.summary(pauses)).isEqualTo("3 pauses, p50 4.32 ms, p99 12.00 ms, max 12.00 ms");
    }
}
