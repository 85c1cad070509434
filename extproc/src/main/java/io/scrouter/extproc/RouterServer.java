package io.scrouter.extproc;

import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.protobuf.services.HealthStatusManager;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.envoy.ExtProcService;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.envoy.StreamLimits;
import io.scrouter.extproc.ops.OperatorEndpoints;
import io.scrouter.extproc.ops.RouterMetrics;
import io.scrouter.extproc.ops.RouterStatus;
import io.scrouter.extproc.pool.InstanceStore;
import io.scrouter.extproc.pool.LoadProber;
import io.scrouter.extproc.pool.PoolRefresher;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.extproc.routing.RouterSettings;
import io.scrouter.extproc.routing.Routing;
import io.scrouter.extproc.routing.SessionCounts;
import io.scrouter.extproc.routing.SessionRouter;
import io.scrouter.extproc.runtime.DaemonThreads;
import io.scrouter.extproc.runtime.IoLoops;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.extproc.session.BindingFeed;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import io.scrouter.scorer.probe.SparkRestProbe;
import io.scrouter.scorer.smoothing.Ewma;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * One running router: builds the object graph from the configuration in plain code, starts the ext_proc
 * gRPC server and the background loops (pool poll, load probes, session counts), and stops them all.
 */
public final class RouterServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RouterServer.class);

    private final RouterConfig config;
    private final TimeSource time;
    private final RedissonClient redis;
    private final SessionStore sessions;
    private final ServerPool pool;
    private final PoolRefresher poolRefresher;
    private final LoadBoard board;
    private final LoadProber prober;
    private final SessionCounts counts;
    private final Routing routing;
    private final HealthStatusManager health = new HealthStatusManager();
    private final ScheduledExecutorService maintenance;
    private final ExecutorService probeExecutor;
    private final Server server;
    private final RouterStatus status;
    private final RouterMetrics metrics;
    private final StreamLimits limits;
    private final IoLoops io;
    private OperatorEndpoints endpoints;

    private RouterServer(RouterConfig config, ServerBuilder<?> builder, IoLoops io, DecisionObserver observer,
                         TimeSource time) {
        this.config = config;
        this.time = time;
        this.io = io;
        LongSupplier clock = time::millis;
        // The metrics read the status lazily (at scrape time), so they can be built before the parts they watch.
        RouterStatus[] statusRef = new RouterStatus[1];
        this.metrics = new RouterMetrics(() -> statusRef[0]);
        Stores stores = Stores.from(config, clock, metrics, io);
        this.redis = stores.redis();
        this.sessions = stores.sessions();
        BindingFeed feed = stores.feed();
        InstanceStore instances = stores.instances();
        this.pool = new ServerPool();
        this.poolRefresher = new PoolRefresher(instances, pool, poolReadDeadline(), config.pool().departureGrace(),
                clock);
        RouterConfig.Placement p = config.placement();
        this.board = new LoadBoard(new Ewma(p.ewmaAlpha(), config.probe().interval().toMillis()),
                config.probe().staleAfter().toMillis());
        this.probeExecutor = Executors.newFixedThreadPool(2, DaemonThreads.named("scrouter-probe"));
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.probe().timeout()).executor(probeExecutor).build();
        this.prober = new LoadProber(pool, board,
                replica -> new SparkRestProbe(http, replica.metricsUrl(), config.probe().timeout()), clock);
        this.counts = new SessionCounts(sessions,
                SessionCounts.recentWindowFor(config.sessions().refreshEvery().toMillis()));
        Placer placer = new Placer(Policies.byName(p.policy(),
                new PolicySettings(p.utilisationWeight(), p.sessionWeight(), p.sessionCap())));
        this.routing = Routing.assemble(pool, poolRefresher, sessions, feed,
                new Routing.PlacementInputs(placer, board, counts, ThreadLocalRandom::current,
                        ReplicaGroups.from(config.groups())),
                RouterSettings.from(config), time);
        this.status = new RouterStatus(pool, board, prober, poolRefresher, routing, clock);
        statusRef[0] = status;
        this.maintenance = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("scrouter-maintenance"));
        this.limits = new StreamLimits(config.server().decisionDeadline().toMillis(),
                config.server().maxBufferedBodyBytes());
        DecisionObserver observers = (d, nanos, forged) -> {
            metrics.decided(d, nanos, forged);
            observer.decided(d, nanos, forged);
        };
        // Envoy sends at most its stream window of body in one message (BUFFERED_PARTIAL); anything larger up to
        // the ceiling is still read, so that it can be refused with a message rather than a reset.
        this.server = builder
                .maxInboundMessageSize(limits.maxInboundMessageBytes())
                .addService(new ExtProcService(routing.router()::decide, observers, limits, time))
                .addService(health.getHealthService())
                .build();
    }

    /** Starts a router on Netty at the configured address; its gRPC server and Redis client share event loops. */
    public static RouterServer start(RouterConfig config) throws IOException {
        IoLoops io = IoLoops.perProcessor();
        return new RouterServer(config, io.serverBuilder(new InetSocketAddress(config.server().bindAddress(),
                config.server().port())), io, DecisionObserver.NONE, SystemTime.onLoops(io.group())).begin();
    }

    /** Starts a router on any transport (tests pass an in-process builder), with its own time source. */
    public static RouterServer start(RouterConfig config, ServerBuilder<?> builder, DecisionObserver observer,
                                     TimeSource time) throws IOException {
        return new RouterServer(config, builder, null, observer, time).begin();
    }

    private RouterServer begin() throws IOException {
        try {
            poolRefresher.refresh().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.warn("first pool read did not finish: {}; starting with an empty pool, the next poll retries", e.toString());
        }
        // Now that the pool is known, learn the other routers' bindings before taking requests.
        routing.reconciler().reconcile();
        List<String> ids = pool.snapshot().all().stream().map(Replica::id).toList();
        counts.refresh(ids, 1000);
        prober.probeAll();
        long poll = config.pool().pollInterval().toMillis();
        maintenance.scheduleWithFixedDelay(this::safely, poll, poll, TimeUnit.MILLISECONDS);
        long probe = config.probe().interval().toMillis();
        maintenance.scheduleWithFixedDelay(prober::probeAll, probe, probe, TimeUnit.MILLISECONDS);
        // Envoy and Kubernetes check the ext_proc service's own health: not serving until warm.
        health.setStatus(RouteHeaders.HEALTH_SERVICE, HealthCheckResponse.ServingStatus.NOT_SERVING);
        server.start();
        if (config.server().warmUp()) {
            try {
                sessions.prepare().get(Math.max(1000, 20 * storeTimeoutMillis()), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                LOG.warn("could not prepare the session store ({}); its first calls may be slower", e.toString());
            }
            Warmup.run(routing.router(), limits, time,
                    config.groups().map(g -> g.allow().keySet().iterator().next()).orElse(null));
        }
        endpoints = OperatorEndpoints.start(config, status, metrics, sessions);
        // Logged before SERVING, so anyone who saw SERVING finds the ports (admin.port 0 picks one) in the log.
        LOG.info("ext_proc router listening on {}:{} (store={}, policy={}, pool={} replicas, {})",
                config.server().bindAddress(), port(), redis == null ? "embedded" : "redis",
                config.placement().policy(), pool.snapshot().size(), endpoints.describe(config));
        health.setStatus("", HealthCheckResponse.ServingStatus.SERVING);
        health.setStatus(RouteHeaders.HEALTH_SERVICE, HealthCheckResponse.ServingStatus.SERVING);
        return this;
    }

    private void safely() {
        try {
            routing.reconciler().reconcile();
            poolRefresher.refresh().thenCompose(snapshot -> counts.refresh(
                    snapshot.all().stream().map(Replica::id).toList(),
                    poolReadDeadline().toMillis()));
        } catch (RuntimeException e) {
            LOG.warn("pool maintenance failed: {}", e.toString());
        }
    }

    public int port() {
        return server.getPort();
    }

    private long storeTimeoutMillis() {
        return config.storeCalls().timeout().toMillis();
    }

    /** Reading the pool or the session counts touches several keys: a few store timeouts, at least 200 ms. */
    private Duration poolReadDeadline() {
        return Duration.ofMillis(Math.max(storeTimeoutMillis() * 4, 200));
    }

    public SessionRouter router() {
        return routing.router();
    }

    /** The routing side: decision path, reconciler, near-cache, placement, guarded store. */
    public Routing routing() {
        return routing;
    }

    public ServerPool pool() {
        return pool;
    }

    public LoadBoard board() {
        return board;
    }

    public PoolRefresher poolRefresher() {
        return poolRefresher;
    }

    public SessionCounts counts() {
        return counts;
    }

    public SessionStore sessions() {
        return sessions;
    }

    public RouterConfig config() {
        return config;
    }

    public RouterStatus status() {
        return status;
    }

    public RouterMetrics metrics() {
        return metrics;
    }

    /** The admin view's port, or -1 when it is off. */
    public int adminPort() {
        return endpoints == null ? -1 : endpoints.adminPort();
    }

    /** The metrics endpoint's port, or -1 when it is off. */
    public int metricsPort() {
        return endpoints == null ? -1 : endpoints.metricsPort();
    }

    /**
     * Stops the way a rollout needs: first reports NOT_SERVING (gRPC health, which Envoy's health check and
     * Kubernetes readiness read; {@code /readyz} too) while still answering every stream, for
     * {@code server.drainPeriod}, so that Envoy stops opening streams here before the router stops; then
     * closes. Streams end with OK right after their answer, so nothing in flight outlives the drain.
     */
    public void drainAndClose() {
        Duration drain = config.server().drainPeriod();
        LOG.info("draining: reporting NOT_SERVING and still answering for {} ms, then stopping", drain.toMillis());
        health.setStatus(RouteHeaders.HEALTH_SERVICE, HealthCheckResponse.ServingStatus.NOT_SERVING);
        health.setStatus("", HealthCheckResponse.ServingStatus.NOT_SERVING);
        status.startDraining();
        try {
            Thread.sleep(drain.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        close();
    }

    @Override
    public void close() {
        health.enterTerminalState();
        status.startDraining();
        if (endpoints != null) {
            endpoints.close();
        }
        server.shutdown();
        maintenance.shutdownNow();
        try {
            // Streams close right after their answer: the longest one left is a decision under way.
            server.awaitTermination(Math.max(1000, 4 * limits.decisionDeadlineMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.shutdownNow();
        probeExecutor.shutdownNow();
        if (redis != null) {
            redis.shutdown();
        }
        if (io != null) {
            io.close();
        }
    }
}
