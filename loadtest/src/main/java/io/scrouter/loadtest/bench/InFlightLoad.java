package io.scrouter.loadtest.bench;

import io.scrouter.extproc.client.ExtProcClient;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;

/**
 * A closed loop with a fixed number of requests in flight, as a busy Envoy keeps them: each answer sends the
 * next request at once, on a stream chosen by {@link LeastRequest} among the target's servers, one
 * {@code Process} stream per request ({@link ExtProcClient}). Latency is from sending the headers to the
 * answer, recorded in an HdrHistogram. A request that ends without a route (an error or an immediate
 * rejection) is counted as an error and not in the latencies.
 */
final class InFlightLoad {

    /** What one round measured. */
    record Figures(long answered, long errors, double seconds, Histogram latencyNanos, long[] perServer,
                   Map<String, Long> errorReasons) {

        double perSecond() {
            return answered / seconds;
        }

        double p50Millis() {
            return latencyNanos.getValueAtPercentile(50) / 1e6;
        }

        double p99Millis() {
            return latencyNanos.getValueAtPercentile(99) / 1e6;
        }
    }

    private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final List<ExtProcClient> servers;

    InFlightLoad(List<ExtProcClient> servers) {
        this.servers = List.copyOf(servers);
    }

    /**
     * Runs for {@code millis} with {@code inFlight} requests always outstanding; returns once every request
     * sent has been answered (bounded: at most {@code millis} plus 30 s).
     */
    Figures run(Supplier<String> sessions, int inFlight, long millis) throws InterruptedException {
        Recorder recorder = new Recorder(HIGHEST_NANOS, 3);
        AtomicLong errors = new AtomicLong();
        Map<String, Long> reasons = new ConcurrentHashMap<>();
        AtomicLongArray perServer = new AtomicLongArray(servers.size());
        LeastRequest balancer = new LeastRequest(servers.size(), LeastRequest.ENVOY_DEFAULT_CHOICES);
        CountDownLatch loopsEnded = new CountDownLatch(inFlight);
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        Loop loop = new Loop(sessions, end, recorder, errors, reasons, perServer, balancer, loopsEnded);
        for (int i = 0; i < inFlight; i++) {
            loop.next();
        }
        if (!loopsEnded.await(millis + 30_000, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(loopsEnded.getCount() + " of " + inFlight
                    + " requests were still unanswered 30 s after the round ended");
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Histogram h = recorder.getIntervalHistogram();
        long[] counts = new long[servers.size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = perServer.get(i);
        }
        return new Figures(h.getTotalCount(), errors.get(), seconds, h, counts, new TreeMap<>(reasons));
    }

    /** The requests in flight; each answer starts the next request until the round's end. */
    private final class Loop {
        private final Supplier<String> sessions;
        private final long end;
        private final Recorder recorder;
        private final AtomicLong errors;
        private final Map<String, Long> reasons;
        private final AtomicLongArray perServer;
        private final LeastRequest balancer;
        private final CountDownLatch loopsEnded;

        Loop(Supplier<String> sessions, long end, Recorder recorder, AtomicLong errors, Map<String, Long> reasons,
             AtomicLongArray perServer, LeastRequest balancer, CountDownLatch loopsEnded) {
            this.reasons = reasons;
            this.sessions = sessions;
            this.end = end;
            this.recorder = recorder;
            this.errors = errors;
            this.perServer = perServer;
            this.balancer = balancer;
            this.loopsEnded = loopsEnded;
        }

        void next() {
            int server = balancer.pick(bound -> ThreadLocalRandom.current().nextInt(bound));
            String session = sessions.get();
            long sent = System.nanoTime();
            servers.get(server).sendAsync(ExtProcClient.sparkCall("ExecutePlan", session)).whenComplete((response, error) -> {
                long now = System.nanoTime();
                balancer.done(server);
                perServer.incrementAndGet(server);
                if (error == null && response.hasRequestHeaders() && !response.hasImmediateResponse()) {
                    recorder.recordValue(Math.min(HIGHEST_NANOS, now - sent));
                } else {
                    errors.incrementAndGet();
                    String reason = error != null ? io.grpc.Status.fromThrowable(error).getCode().toString()
                            : response.hasImmediateResponse() ? response.getImmediateResponse().getDetails()
                            : "answer without request_headers";
                    reasons.merge(reason.length() > 80 ? reason.substring(0, 80) : reason, 1L, Long::sum);
                }
                if (now < end) {
                    next();
                } else {
                    loopsEnded.countDown();
                }
            });
        }
    }
}
