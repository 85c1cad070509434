package io.scrouter.loadtest.fault;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class HeapTrendTest {

    private static final long MIB = 1 << 20;

    /** Cache fills over the first 3 samples, then live heap follows {@code liveAfter(i)} MiB. */
    private static List<HeapTrend.Sample> series(int n, java.util.function.IntToLongFunction liveMib, long bound) {
        List<HeapTrend.Sample> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new HeapTrend.Sample(10.0 * (i + 1), liveMib.applyAsLong(i) * MIB, Math.min(bound, bound * (i + 1) / 3)));
        }
        return out;
    }

    @Test
    void flatHeapAfterTheCacheFillsIsBoundedEvenIfItGrewWhileFilling() {
        var v = HeapTrend.judge(series(60, i -> i < 3 ? 20 + 5L * i : 30 + (i % 2), 20_000), 20_000);
        assertThat(v.bounded()).as(v.reason()).isTrue();
    }

    @Test
    void steadyGrowthAfterTheCacheFillsIsNotBounded() {
        var v = HeapTrend.judge(series(60, i -> 30 + i, 20_000), 20_000);
        assertThat(v.bounded()).isFalse();
        assertThat(v.reason()).contains("MiB/min");
    }

    @Test
    void aCacheAboveItsBoundOrNeverFullIsReported() {
        List<HeapTrend.Sample> over = new ArrayList<>(series(10, i -> 30, 20_000));
        over.add(new HeapTrend.Sample(200, 30 * MIB, 25_000));
        assertThat(HeapTrend.judge(over, 20_000).reason()).contains("bound 20000");
        assertThat(HeapTrend.judge(series(10, i -> 30, 100), 20_000).reason()).startsWith("inconclusive");
    }

    @Test
    void slopeOfALineIsItsGradient() {
        List<HeapTrend.Sample> line = List.of(new HeapTrend.Sample(0, 100, 0), new HeapTrend.Sample(10, 200, 0),
                new HeapTrend.Sample(20, 300, 0));
        assertThat(HeapTrend.slopeBytesPerSecond(line)).isEqualTo(10.0);
    }
}
