package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A router's own account of a round, read from its Prometheus endpoint before and after: its answers by outcome
 * (a {@code fallback} answer was placed by rendezvous, not by the placement policy, so it says how much of a round's
 * throughput the policy placed), and how long its decisions and its find-or-bind calls took, as the router's
 * histogram buckets count them.
 * Set beside the client's latencies, it says whether a tail lies in the router's wait for Redis or outside the
 * decision (gRPC, the client, the scheduler).
 *
 * @param outcomes      answers by outcome ({@code placed}, {@code fallback}, {@code known}, {@code rejected}, …)
 * @param decisions     decisions of every outcome: bucket upper bound in seconds → decisions at most that long
 * @param findOrBind    the store's find-or-bind calls, bucketed the same way
 */
record RouterView(Map<String, Long> outcomes, Map<Double, Long> decisions, Map<Double, Long> findOrBind) {

    static final RouterView NONE = new RouterView(Map.of(), Map.of(), Map.of());

    private static final Pattern OUTCOME = Pattern.compile(
            "^scrouter_decisions_total\\{outcome=\"([^\"]+)\"[^}]*} ([0-9.eE+-]+)$");
    private static final Pattern DECISION_BUCKET = Pattern.compile(
            "^scrouter_decision_duration_seconds_bucket\\{outcome=\"[^\"]+\",le=\"([^\"]+)\"} ([0-9.eE+-]+)$");
    private static final Pattern FIND_OR_BIND_BUCKET = Pattern.compile(
            "^scrouter_store_call_duration_seconds_bucket\\{operation=\"find_or_bind\",le=\"([^\"]+)\"} "
                    + "([0-9.eE+-]+)$");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Reads the router's metrics page; {@link #NONE} when it has no metrics port. */
    static RouterView scrape(int metricsPort) throws IOException, InterruptedException {
        if (metricsPort <= 0) {
            return NONE;
        }
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("the router's metrics on port " + metricsPort + " answered HTTP " + r.statusCode());
        }
        return parse(r.body());
    }

    /** The figures of a Prometheus text page; lines of other metrics are skipped. */
    static RouterView parse(String page) {
        Map<String, Long> outcomes = new TreeMap<>();
        Map<Double, Long> decisions = new TreeMap<>();
        Map<Double, Long> findOrBind = new TreeMap<>();
        for (String line : page.split("\n")) {
            Matcher m;
            if ((m = OUTCOME.matcher(line)).matches()) {
                outcomes.merge(m.group(1), count(m.group(2)), Long::sum);
            } else if ((m = DECISION_BUCKET.matcher(line)).matches()) {
                decisions.merge(bound(m.group(1)), count(m.group(2)), Long::sum);
            } else if ((m = FIND_OR_BIND_BUCKET.matcher(line)).matches()) {
                findOrBind.merge(bound(m.group(1)), count(m.group(2)), Long::sum);
            }
        }
        return new RouterView(outcomes, decisions, findOrBind);
    }

    private static long count(String s) {
        return Math.round(Double.parseDouble(s));
    }

    private static double bound(String le) {
        return le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
    }

    /** What happened between {@code before} and this reading. */
    RouterView since(RouterView before) {
        return combined(before, -1);
    }

    /** This reading and {@code other}'s together (several routers sharing a round). */
    RouterView plus(RouterView other) {
        return combined(other, 1);
    }

    /** Every decision the account counts, of any outcome. */
    long decisionCount() {
        return outcomes.values().stream().mapToLong(Long::longValue).sum();
    }

    private RouterView combined(RouterView other, long sign) {
        return new RouterView(merged(outcomes, other.outcomes, sign), merged(decisions, other.decisions, sign),
                merged(findOrBind, other.findOrBind, sign));
    }

    private static <K extends Comparable<K>> Map<K, Long> merged(Map<K, Long> a, Map<K, Long> b, long sign) {
        Map<K, Long> out = new TreeMap<>(a);
        b.forEach((k, v) -> out.merge(k, sign * v, Long::sum));
        return out;
    }

    /**
     * The upper bound, in seconds, of the bucket that holds quantile {@code q} of a cumulative histogram: the
     * quantile is at most this. Infinite when it lies past the last finite bucket; NaN when nothing was counted.
     */
    static double atMost(Map<Double, Long> cumulative, double q) {
        long total = cumulative.getOrDefault(Double.POSITIVE_INFINITY, 0L);
        if (total <= 0) {
            return Double.NaN;
        }
        long wanted = (long) Math.ceil(q * total);
        for (Map.Entry<Double, Long> e : new TreeMap<>(cumulative).entrySet()) {
            if (e.getValue() >= wanted) {
                return e.getKey();
            }
        }
        return Double.POSITIVE_INFINITY;
    }

    /** "≤ 0.5 ms", "> 0.5 s" past the last bucket, or "none" when nothing was counted. */
    static String formatAtMost(Map<Double, Long> cumulative, double q) {
        double s = atMost(cumulative, q);
        if (Double.isNaN(s)) {
            return "none";
        }
        if (Double.isInfinite(s)) {
            double last = cumulative.keySet().stream().filter(Double::isFinite).mapToDouble(Double::doubleValue)
                    .max().orElse(0);
            return String.format(Locale.ROOT, "> %s ms", trim(last * 1000));
        }
        return String.format(Locale.ROOT, "≤ %s ms", trim(s * 1000));
    }

    private static String trim(double millis) {
        String s = String.format(Locale.ROOT, "%.3f", millis);
        return s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
    }
}
