package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.trace.TraceEvent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Fits the clients of a scenario to a log of real sessions, keeping the cluster of a base scenario:
 * <ul>
 *   <li>arrivals: crowds of sessions (see {@link #findBursts}) become {@code bursts}; the rest a rate per
 *       {@code bin} as {@code profile};</li>
 *   <li>session lifetime, time to the first query and think time: log-normal by the median and spread of
 *       their logarithms (think time is the gap between one query and the next, an upper bound when the
 *       log has no finishing times);</li>
 *   <li>query sizes: task counts as found, rounded up to powers of two; task time log-normal;</li>
 *   <li>user intensity: the tail of per-session query rates relative to the median (Hill estimator over the
 *       top fifth), as a Pareto shape.</li>
 * </ul>
 * What the log lacks keeps the base scenario's value, and {@link Result#notes} says which.
 */
public final class ScenarioFit {

    static final int BURST_MIN = 8;

    /** The fitted scenario and one line per fitted or kept value. */
    public record Result(ScenarioSpec spec, List<String> notes) {
    }

    private ScenarioFit() {
    }

    public static Result fit(List<TraceEvent> log, ScenarioSpec base, String name, long binMillis) {
        List<String> notes = new ArrayList<>();
        Map<String, Long> starts = new HashMap<>();
        Map<String, Long> ends = new HashMap<>();
        Map<String, List<TraceEvent.Query>> queries = new HashMap<>();
        long last = 0;
        for (TraceEvent e : log) {
            last = Math.max(last, e.atMillis());
            if (e instanceof TraceEvent.SessionStart) {
                starts.putIfAbsent(e.session(), e.atMillis());
            } else if (e instanceof TraceEvent.Query q) {
                queries.computeIfAbsent(q.session(), k -> new ArrayList<>()).add(q);
            } else {
                ends.put(e.session(), e.atMillis());
            }
        }
        // Sessions seen only through queries started at their first query.
        queries.forEach((s, qs) -> starts.putIfAbsent(s, qs.get(0).atMillis()));
        if (starts.size() < 2) {
            throw new IllegalArgumentException("the log names " + starts.size() + " session(s); a fit needs at least 2");
        }
        long duration = Math.max(60_000, roundUp(last + 1, 60_000));
        ScenarioSpec.Clients c = base.clients();

        long[] startTimes = starts.values().stream().mapToLong(Long::longValue).sorted().toArray();
        List<ScenarioSpec.Burst> bursts = new ArrayList<>();
        boolean[] inBurst = findBursts(startTimes, duration, bursts);
        List<ScenarioSpec.RateStep> profile = new ArrayList<>();
        long bins = (duration + binMillis - 1) / binMillis;
        long[] perBin = new long[(int) bins];
        for (int i = 0; i < startTimes.length; i++) {
            if (!inBurst[i]) {
                perBin[(int) Math.min(bins - 1, startTimes[i] / binMillis)]++;
            }
        }
        for (int b = 0; b < bins; b++) {
            long width = Math.min(binMillis, duration - b * binMillis);
            profile.add(new ScenarioSpec.RateStep(b * binMillis, round(perBin[b] * 1000.0 / width)));
        }
        notes.add(String.format(Locale.ROOT, "%d sessions over %s: %d in %d bursts, the rest as a rate per %d s",
                startTimes.length, io.scrouter.loadtest.scenario.DurationText.format(duration),
                bursts.stream().mapToInt(ScenarioSpec.Burst::sessions).sum(), bursts.size(), binMillis / 1000));

        List<Double> lifetimes = new ArrayList<>();
        ends.forEach((s, end) -> {
            Long start = starts.get(s);
            if (start != null && end > start) {
                lifetimes.add((double) (end - start));
            }
        });
        ScenarioSpec.Spread lifetime = logNormal("lifetime", lifetimes, c.lifetime(), notes);
        List<Double> firstDelays = new ArrayList<>();
        List<Double> gaps = new ArrayList<>();
        List<Double> taskMillis = new ArrayList<>();
        Map<Integer, Integer> taskCounts = new TreeMap<>();
        List<Double> sessionRates = new ArrayList<>();
        for (Map.Entry<String, List<TraceEvent.Query>> e : queries.entrySet()) {
            List<TraceEvent.Query> qs = e.getValue();
            Long start = starts.get(e.getKey());
            if (start != null && qs.get(0).atMillis() >= start) {
                firstDelays.add((double) (qs.get(0).atMillis() - start));
            }
            List<Double> own = new ArrayList<>();
            for (int i = 0; i < qs.size(); i++) {
                TraceEvent.Query q = qs.get(i);
                taskMillis.add((double) q.taskMillis());
                taskCounts.merge(Integer.highestOneBit(Math.max(1, q.tasks() - 1)) << (q.tasks() > 1 ? 1 : 0), 1,
                        Integer::sum);
                if (i > 0) {
                    double gap = Math.max(1, qs.get(i).atMillis() - qs.get(i - 1).atMillis());
                    gaps.add(gap);
                    own.add(gap);
                }
            }
            if (own.size() >= 3) {
                sessionRates.add(1.0 / median(own));
            }
        }
        long firstQuery = firstDelays.isEmpty() ? c.firstQueryAfterMillis()
                : Math.round(firstDelays.stream().mapToDouble(Double::doubleValue).average().orElse(0));
        notes.add(firstDelays.isEmpty() ? "firstQueryAfter: no queries in the log, kept"
                : "firstQueryAfter: mean of " + firstDelays.size() + " sessions");
        ScenarioSpec.Spread think = logNormal("think", gaps, c.think(), notes);
        ScenarioSpec.Spread taskTime = logNormal("taskTime", taskMillis, c.taskTime(), notes);
        List<ScenarioSpec.TaskWeight> tasks = new ArrayList<>();
        long totalQueries = taskCounts.values().stream().mapToLong(Integer::longValue).sum();
        taskCounts.forEach((t, n) -> tasks.add(new ScenarioSpec.TaskWeight(t, round((double) n / totalQueries))));
        notes.add(tasks.isEmpty() ? "tasks: no queries in the log, kept"
                : "tasks: " + totalQueries + " queries, task counts rounded up to powers of two");
        ScenarioSpec.Intensity intensity = intensity(sessionRates, c.intensity(), notes);

        ScenarioSpec.Clients clients = new ScenarioSpec.Clients(c.loop(), -1, 0, false, c.nightShare(), profile, bursts,
                lifetime, firstQuery, think, intensity, new ScenarioSpec.Heavy(0, 1, 1, 1),
                tasks.isEmpty() ? c.tasks() : tasks, taskTime);
        long warmup = Math.min(base.warmupMillis(), duration / 4);
        ScenarioSpec spec = new ScenarioSpec(name, "fitted to a log of " + startTimes.length + " sessions; cluster of "
                + base.name(), duration, warmup, Math.min(duration, Math.max(warmup, duration / 2)), clients,
                base.cluster());
        return new Result(spec, notes);
    }

    /** Window lengths tried for a crowd, shortest first. */
    private static final long[] WINDOWS = {1_000, 5_000, 30_000};

    /**
     * Marks sessions in bursts and appends one {@link ScenarioSpec.Burst} per crowd found. A start is in a
     * crowd when a window of 1, 5 or 30 s centred on it holds at least {@link #BURST_MIN} starts and ten
     * times what the log's average rate would bring there. Neighbouring crowded starts belong to the same
     * burst when they are closer than half the smaller of their two windows, so a lone start near a sharp
     * crowd (crowded only on the 30 s scale) does not stretch it.
     */
    static boolean[] findBursts(long[] sorted, long duration, List<ScenarioSpec.Burst> bursts) {
        int n = sorted.length;
        long[] window = new long[n]; // the smallest window in which a start is crowded, 0 if none
        double perMilli = (double) n / duration;
        for (int i = 0; i < n; i++) {
            for (long w : WINDOWS) {
                int count = upTo(sorted, 0, sorted[i] + w / 2) - upTo(sorted, 0, sorted[i] - w / 2);
                if (count >= Math.max(BURST_MIN, 10 * perMilli * w)) {
                    window[i] = w;
                    break;
                }
            }
        }
        boolean[] in = new boolean[n];
        int i = 0;
        while (i < n) {
            if (window[i] == 0) {
                i++;
                continue;
            }
            int end = i + 1;
            while (end < n && window[end] > 0 && sorted[end] - sorted[end - 1] <= Math.min(window[end], window[end - 1]) / 2) {
                end++;
            }
            if (end - i >= BURST_MIN) {
                for (int k = i; k < end; k++) {
                    in[k] = true;
                }
                bursts.add(new ScenarioSpec.Burst(sorted[i], end - i, Math.max(1, sorted[end - 1] - sorted[i] + 1)));
            }
            i = end;
        }
        return in;
    }

    /** The first index at or after {@code from} whose time is not before {@code until} (binary search). */
    private static int upTo(long[] sorted, int from, long until) {
        int lo = from;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] < until) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static ScenarioSpec.Spread logNormal(String what, List<Double> values, ScenarioSpec.Spread kept,
                                                 List<String> notes) {
        if (values.size() < 5) {
            notes.add(what + ": " + values.size() + " values in the log, too few; kept");
            return kept;
        }
        double[] logs = values.stream().mapToDouble(v -> Math.log(Math.max(1, v))).toArray();
        double mean = Arrays.stream(logs).average().orElse(0);
        double sd = Math.sqrt(Arrays.stream(logs).map(l -> (l - mean) * (l - mean)).sum() / (logs.length - 1));
        long min = Math.round(values.stream().mapToDouble(Double::doubleValue).min().orElse(1));
        long max = Math.round(values.stream().mapToDouble(Double::doubleValue).max().orElse(1));
        notes.add(String.format(Locale.ROOT, "%s: log-normal from %d values (median %.0f ms, sigma %.2f)", what,
                values.size(), Math.exp(mean), sd));
        return new ScenarioSpec.Spread(Math.max(1, Math.round(Math.exp(mean))), round(Math.min(5, sd)), Math.max(1, min),
                Math.max(Math.max(1, min), max));
    }

    private static ScenarioSpec.Intensity intensity(List<Double> rates, ScenarioSpec.Intensity kept, List<String> notes) {
        if (rates.size() < 20) {
            notes.add("intensity: " + rates.size() + " sessions with 4+ queries, too few for a tail; kept");
            return kept;
        }
        double[] sorted = rates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double median = sorted[sorted.length / 2];
        int k = Math.max(5, sorted.length / 5);
        double threshold = sorted[sorted.length - k - 1] / median;
        double sum = 0;
        for (int i = sorted.length - k; i < sorted.length; i++) {
            sum += Math.log(sorted[i] / median / threshold);
        }
        double alpha = sum <= 0 ? 0 : k / sum;
        double max = sorted[sorted.length - 1] / median;
        if (alpha <= 1.05 || alpha > 20) {
            notes.add(String.format(Locale.ROOT, "intensity: tail shape %.2f from %d sessions is %s; users taken as equal",
                    alpha, rates.size(), alpha > 20 ? "flat" : "too heavy for a finite mean"));
            return new ScenarioSpec.Intensity(alpha > 20 ? 0 : 1.1, Math.max(1, round(max)));
        }
        notes.add(String.format(Locale.ROOT, "intensity: Pareto shape %.2f (Hill estimator, top %d of %d sessions), cap %.1f",
                alpha, k, rates.size(), max));
        return new ScenarioSpec.Intensity(round(alpha), Math.max(1, round(max)));
    }

    private static double median(List<Double> values) {
        double[] s = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return s[s.length / 2];
    }

    private static long roundUp(long v, long step) {
        return (v + step - 1) / step * step;
    }

    private static double round(double v) {
        return Math.round(v * 10_000) / 10_000.0;
    }
}
