package io.scrouter.testkit.envoy;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code extproc} cluster: the routers' endpoints, each actively health-checked over {@code grpc.health.v1},
 * and the choice of one for each new {@code Process} stream.
 *
 * <ul>
 *   <li>Health checking ({@code source/extensions/health_checkers/common/health_checker_base_impl.cc},
 *       {@code ActiveHealthCheckSession::handleSuccess}, {@code handleFailure}, {@code setUnhealthy};
 *       {@code grpc/health_checker_impl.cc}, {@code GrpcActiveHealthCheckSession::onRpcComplete}): a host
 *       starts unhealthy and turns healthy on its first passing check; after that it needs
 *       {@code healthy_threshold} consecutive passes. A reply other than SERVING makes it unhealthy at once;
 *       timeouts and failed connections count toward {@code unhealthy_threshold} consecutive failures. Checks
 *       run every {@code interval}, with no jitter (the defaults).</li>
 *   <li>Panic ({@code source/extensions/load_balancing_policies/common/load_balancer_impl.cc},
 *       {@code LoadBalancerBase::recalculatePerPriorityPanic}): below (not at) 50% healthy hosts, Envoy balances
 *       over all of them, unhealthy ones included.</li>
 *   <li>Choice ({@code least_request_lb.cc}, {@code unweightedHostPickNChoices}, {@code choice_count} 2): two
 *       random draws with replacement, the one with fewer active streams; a tie keeps the first.</li>
 * </ul>
 */
final class ExtProcCluster implements AutoCloseable {

    /** One router endpoint as the cluster sees it. */
    static final class Host {
        final InetSocketAddress address;
        final ManagedChannel channel;
        final AtomicInteger activeStreams = new AtomicInteger();
        private volatile boolean healthy;
        private boolean everHealthy;
        private int failures;
        private int successes;

        Host(InetSocketAddress address) {
            this.address = address;
            this.channel = NettyChannelBuilder.forAddress(address).usePlaintext()
                    .maxInboundMessageSize(16 << 20).build();
        }

        boolean healthy() {
            return healthy;
        }
    }

    private final List<Host> hosts = new ArrayList<>();
    private final EnvoyModel.ExtProcHealthCheck check;
    private final ScheduledExecutorService timers;

    ExtProcCluster(List<InetSocketAddress> endpoints, EnvoyModel.ExtProcHealthCheck check,
                   ScheduledExecutorService timers) {
        this.check = check;
        this.timers = timers;
        for (InetSocketAddress a : endpoints) {
            Host h = new Host(a);
            hosts.add(h);
            timers.execute(() -> checkHealth(h));
        }
    }

    private void checkHealth(Host h) {
        if (!h.healthy) {
            // Envoy's checker connects again on each interval; gRPC's own back-off would wait far longer.
            h.channel.resetConnectBackoff();
        }
        var call = HealthGrpc.newFutureStub(h.channel)
                .withDeadlineAfter(check.timeout().toMillis(), TimeUnit.MILLISECONDS)
                .check(HealthCheckRequest.newBuilder().setService(check.service()).build());
        call.addListener(() -> {
            Outcome outcome;
            try {
                outcome = call.get().getStatus() == HealthCheckResponse.ServingStatus.SERVING ? Outcome.PASS
                        : Outcome.NOT_SERVING;
            } catch (Exception e) {
                // A timeout, a refused or reset connection: a network failure.
                outcome = Outcome.NETWORK_FAILURE;
            }
            record(h, outcome);
            if (!timers.isShutdown()) {
                timers.schedule(() -> checkHealth(h), check.interval().toMillis(), TimeUnit.MILLISECONDS);
            }
        }, Runnable::run);
    }

    private enum Outcome { PASS, NOT_SERVING, NETWORK_FAILURE }

    private synchronized void record(Host h, Outcome outcome) {
        switch (outcome) {
            case PASS -> {
                h.failures = 0;
                h.successes++;
                if (!h.everHealthy || h.successes >= Math.max(1, check.healthyThreshold())) {
                    h.healthy = true;
                    h.everHealthy = true;
                }
            }
            case NOT_SERVING -> {
                h.successes = 0;
                h.healthy = false;
            }
            case NETWORK_FAILURE -> {
                h.successes = 0;
                if (++h.failures >= Math.max(1, check.unhealthyThreshold())) {
                    h.healthy = false;
                }
            }
        }
    }

    /** The host for a new stream, or null when the cluster has no host at all. */
    Host pick() {
        List<Host> candidates = hosts.stream().filter(Host::healthy).toList();
        if (candidates.size() * 2 < hosts.size()) {
            candidates = hosts; // panic: under 50% healthy
        }
        if (candidates.isEmpty()) {
            return null;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Host a = candidates.get(random.nextInt(candidates.size()));
        Host b = candidates.get(random.nextInt(candidates.size()));
        return a.activeStreams.get() <= b.activeStreams.get() ? a : b;
    }

    List<Host> hosts() {
        return List.copyOf(hosts);
    }

    /** Waits, bounded, until at least {@code n} hosts pass their checks (Envoy's cluster warming). */
    boolean awaitHealthy(int n, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (hosts.stream().filter(Host::healthy).count() >= n) {
                return true;
            }
            Thread.sleep(10);
        }
        return false;
    }

    @Override
    public void close() {
        hosts.forEach(h -> h.channel.shutdownNow());
    }
}
