package io.scrouter.loadtest.bench;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/** A fixed-capacity, lock-free record of latencies in nanoseconds; extra samples beyond capacity are dropped. */
public final class Latencies {

    private final long[] nanos;
    private final AtomicInteger count = new AtomicInteger();

    public Latencies(int capacity) {
        this.nanos = new long[capacity];
    }

    public void add(long n) {
        int i = count.getAndIncrement();
        if (i < nanos.length) {
            nanos[i] = n;
        }
    }

    public int count() {
        return Math.min(count.get(), nanos.length);
    }

    /** Nearest-rank quantile in microseconds. */
    public double micros(double q) {
        int n = count();
        if (n == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(nanos, n);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * n);
        return sorted[Math.max(0, Math.min(n - 1, rank - 1))] / 1_000.0;
    }
}
