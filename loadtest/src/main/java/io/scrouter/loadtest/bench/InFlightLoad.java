package io.scrouter.loadtest.bench;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
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
        return run(sessions, inFlight, 0, () -> { }, millis);
    }

    /**
     * Runs the load for {@code leadInMillis} unmeasured, calls {@code measuring} (which takes the round's "before"
     * readings; with no lead-in, before the first request) without stopping the load, then measures it for
     * {@code millis}: only requests sent after that call count, in the figures and in the errors. The requests in
     * flight carry on from the lead-in into the measured part, so the server never idles between them. Requests still in flight when measuring starts are not counted, though
     * part of their work falls after the readings: at most {@code inFlight} answers of a round's thousands. Returns
     * once every request sent has been answered (bounded: at most {@code millis} plus 30 s after the lead-in).
     */
    Figures run(Supplier<String> sessions, int inFlight, long leadInMillis, Runnable measuring, long millis)
            throws InterruptedException {
        Recorder recorder = new Recorder(HIGHEST_NANOS, 3);
        AtomicLong errors = new AtomicLong();
        Map<String, Long> reasons = new ConcurrentHashMap<>();
        AtomicLongArray perServer = new AtomicLongArray(servers.size());
        LeastRequest balancer = new LeastRequest(servers.size(), LeastRequest.ENVOY_DEFAULT_CHOICES);
        CountDownLatch loopsEnded = new CountDownLatch(inFlight);
        if (leadInMillis == 0) {
            measuring.run();
        }
        long start = System.nanoTime();
        Loop loop = new Loop(sessions, recorder, errors, reasons, perServer, balancer, loopsEnded);
        loop.measuredFrom = leadInMillis == 0 ? start : Long.MAX_VALUE;
        loop.end = start + TimeUnit.MILLISECONDS.toNanos(leadInMillis + millis);
        for (int i = 0; i < inFlight; i++) {
            loop.next();
        }
        long measuredFrom = start;
        if (leadInMillis > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(start + TimeUnit.MILLISECONDS.toNanos(leadInMillis) - System.nanoTime());
                measuring.run();
            } catch (InterruptedException | RuntimeException e) {
                // No round after all: stop sending, and let what is in flight end before whatever runs next.
                loop.end = Long.MIN_VALUE;
                loopsEnded.await(30, TimeUnit.SECONDS);
                throw e;
            }
            measuredFrom = System.nanoTime();
            loop.end = measuredFrom + TimeUnit.MILLISECONDS.toNanos(millis);
            loop.measuredFrom = measuredFrom;
        }
        if (!loopsEnded.await(millis + 30_000, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(loopsEnded.getCount() + " of " + inFlight
                    + " requests were still unanswered 30 s after the round ended");
        }
        double seconds = (System.nanoTime() - measuredFrom) / 1e9;
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
        /** Requests sent from here on count; set once the lead-in is over. */
        volatile long measuredFrom;
        /** No request is sent after this; moved once the lead-in is over. */
        volatile long end;
        private final Recorder recorder;
        private final AtomicLong errors;
        private final Map<String, Long> reasons;
        private final AtomicLongArray perServer;
        private final LeastRequest balancer;
        private final CountDownLatch loopsEnded;

        Loop(Supplier<String> sessions, Recorder recorder, AtomicLong errors, Map<String, Long> reasons,
             AtomicLongArray perServer, LeastRequest balancer, CountDownLatch loopsEnded) {
            this.reasons = reasons;
            this.sessions = sessions;
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
                if (sent >= measuredFrom) {
                    measure(server, now - sent, response, error);
                }
                if (now < end) {
                    next();
                } else {
                    loopsEnded.countDown();
                }
            });
        }

        /** One answer to a request sent once measuring had started: its latency, or the error it ended with. */
        private void measure(int server, long nanos, ProcessingResponse response, Throwable error) {
            perServer.incrementAndGet(server);
            if (error == null && response.hasRequestHeaders() && !response.hasImmediateResponse()) {
                recorder.recordValue(Math.min(HIGHEST_NANOS, nanos));
                return;
            }
            errors.incrementAndGet();
            String reason = error != null ? io.grpc.Status.fromThrowable(error).getCode().toString()
                    : response.hasImmediateResponse() ? response.getImmediateResponse().getDetails()
                    : "answer without request_headers";
            reasons.merge(reason.length() > 80 ? reason.substring(0, 80) : reason, 1L, Long::sum);
        }
    }
}
