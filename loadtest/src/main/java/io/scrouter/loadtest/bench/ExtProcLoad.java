package io.scrouter.loadtest.bench;

import io.grpc.Channel;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.loadtest.LoadTools;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Drives an ext_proc server as Envoy does: one {@code Process} stream per request, one
 * {@code request_headers} message with {@code raw_value} headers, half-close once answered. Two modes:
 * closed loop (N streams always in flight: the most it can do) and open loop at a fixed rate (latency at a
 * given offered load, measured from the moment each request was due, so a stall is not hidden).
 */
final class ExtProcLoad {

    /** Figures of one measured phase. */
    record Result(long requests, long errors, double seconds, double p50Micros, double p99Micros) {
        double perSecond() {
            return requests / seconds;
        }
    }

    private final ExtProcClient calls;

    ExtProcLoad(Channel channel) {
        this.calls = new ExtProcClient(channel, LoadTools.ANSWER_WAIT);
    }

    private interface Done {
        void done(boolean ok);
    }

    private void send(String session, Done done) {
        calls.sendAsync(ExtProcClient.sparkCall("ExecutePlan", session)).whenComplete((r, error) -> done.done(r != null && !r.hasImmediateResponse()));
    }

    Result closedLoop(Supplier<String> sessions, int concurrency, long millis) throws InterruptedException {
        Latencies lat = new Latencies(5_000_000);
        AtomicLong errors = new AtomicLong();
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(millis);
        CountDownLatch finished = new CountDownLatch(concurrency);
        for (int i = 0; i < concurrency; i++) {
            loop(sessions, end, lat, errors, finished);
        }
        finished.await(millis + 30_000, TimeUnit.MILLISECONDS);
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Result(lat.count(), errors.get(), seconds, lat.micros(0.5), lat.micros(0.99));
    }

    private void loop(Supplier<String> sessions, long end, Latencies lat, AtomicLong errors, CountDownLatch finished) {
        long sent = System.nanoTime();
        send(sessions.get(), ok -> {
            long now = System.nanoTime();
            lat.add(now - sent);
            if (!ok) {
                errors.incrementAndGet();
            }
            if (now < end) {
                loop(sessions, end, lat, errors, finished);
            } else {
                finished.countDown();
            }
        });
    }

    Result openLoop(Supplier<String> sessions, double perSecond, long millis) throws InterruptedException {
        long total = (long) (perSecond * millis / 1000.0);
        Latencies lat = new Latencies((int) total + 16);
        AtomicLong errors = new AtomicLong();
        CountDownLatch answered = new CountDownLatch((int) total);
        double intervalNanos = 1e9 / perSecond;
        long start = System.nanoTime();
        for (long i = 0; i < total; i++) {
            long due = start + (long) (i * intervalNanos);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            String session = sessions.get();
            send(session, ok -> {
                lat.add(System.nanoTime() - due);
                if (!ok) {
                    errors.incrementAndGet();
                }
                answered.countDown();
            });
        }
        answered.await(30, TimeUnit.SECONDS);
        double seconds = (System.nanoTime() - start) / 1e9;
        return new Result(lat.count(), errors.get() + answered.getCount(), seconds, lat.micros(0.5), lat.micros(0.99));
    }
}
