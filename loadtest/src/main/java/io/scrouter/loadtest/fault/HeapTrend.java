package io.scrouter.loadtest.fault;

import java.util.List;

/**
 * Judges a soak's heap series: once the near-cache has filled to its configured bound, the live heap (after a
 * full GC) must stop growing. Growth before that point is the cache filling, which is what the bound is for.
 */
final class HeapTrend {

    /** One sample: seconds since the start, live heap after GC, sessions in the router's near-cache. */
    record Sample(double seconds, long liveBytes, long cachedSessions) {
    }

    record Verdict(boolean bounded, String reason) {
    }

    /** Allowed drift after saturation: this fraction of the live heap, or the floor below, whichever is larger. */
    static final double ALLOWED_FRACTION = 0.10;
    static final long ALLOWED_FLOOR_BYTES = 16L << 20;

    private HeapTrend() {
    }

    static Verdict judge(List<Sample> samples, long cacheBound) {
        int full = -1;
        long maxCached = 0;
        for (int i = 0; i < samples.size(); i++) {
            maxCached = Math.max(maxCached, samples.get(i).cachedSessions());
            if (full < 0 && samples.get(i).cachedSessions() >= cacheBound * 0.9) {
                full = i;
            }
        }
        // Caffeine evicts asynchronously, so the size may pass the bound briefly; 5% over is still "bounded".
        if (maxCached > cacheBound * 1.05) {
            return new Verdict(false, "near-cache held " + maxCached + " sessions, bound " + cacheBound);
        }
        if (full < 0 || samples.size() - full < 3) {
            return new Verdict(false, "inconclusive: the near-cache did not reach its bound early enough "
                    + "(need 3 samples after it fills); run longer or faster");
        }
        List<Sample> after = samples.subList(full, samples.size());
        double slope = slopeBytesPerSecond(after);
        double span = after.get(after.size() - 1).seconds() - after.get(0).seconds();
        double mean = after.stream().mapToLong(Sample::liveBytes).average().orElse(0);
        double drift = slope * span;
        double allowed = Math.max(ALLOWED_FLOOR_BYTES, ALLOWED_FRACTION * mean);
        String figures = String.format("live heap after the cache filled: mean %.1f MiB, trend %+.2f MiB/min "
                        + "(%+.1f MiB over %.0f s; allowed %.1f MiB)", mean / (1 << 20), slope * 60 / (1 << 20),
                drift / (1 << 20), span, allowed / (1 << 20));
        return new Verdict(drift <= allowed, figures);
    }

    /** Least-squares slope of live heap against time. */
    static double slopeBytesPerSecond(List<Sample> samples) {
        int n = samples.size();
        double mx = samples.stream().mapToDouble(Sample::seconds).average().orElse(0);
        double my = samples.stream().mapToDouble(Sample::liveBytes).average().orElse(0);
        double num = 0;
        double den = 0;
        for (Sample s : samples) {
            num += (s.seconds() - mx) * (s.liveBytes() - my);
            den += (s.seconds() - mx) * (s.seconds() - mx);
        }
        return n < 2 || den == 0 ? 0 : num / den;
    }
}
