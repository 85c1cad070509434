package io.scrouter.extproc.ops;

import io.netty.channel.EventLoopGroup;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.session.SessionStore;

import java.io.IOException;

/**
 * The router's HTTP endpoints for operators: the admin view ({@code admin.port}) and the Prometheus metrics
 * ({@code metrics.port}), each started only when its port is configured (not -1), and closed together. Both
 * serve on the router's event loops ({@link OpsHttpServer} says why), each building its pages on a thread of its own.
 */
public final class OperatorEndpoints implements AutoCloseable {

    private final AdminServer admin;
    private final OpsHttpServer metricsServer;

    private OperatorEndpoints(AdminServer admin, OpsHttpServer metricsServer) {
        this.admin = admin;
        this.metricsServer = metricsServer;
    }

    /** Starts the endpoints {@code config} turns on. */
    public static OperatorEndpoints start(RouterConfig config, EventLoopGroup loops, RouterStatus status,
                                          RouterMetrics metrics, SessionStore sessions) throws IOException {
        AdminServer admin = config.admin().port() < 0 ? null
                : new AdminServer(loops, config.admin().bindAddress(), config.admin().port(), status, sessions);
        OpsHttpServer metricsServer = null;
        try {
            if (config.metrics().port() >= 0) {
                metricsServer = OpsHttpServer.start(loops, config.metrics().bindAddress(), config.metrics().port(),
                        "scrouter-metrics", new MetricsPage(metrics.registry()));
            }
        } catch (IOException | RuntimeException e) {
            if (admin != null) {
                admin.close();
            }
            throw e;
        }
        return new OperatorEndpoints(admin, metricsServer);
    }

    /** The admin view's port, or -1 when it is off. */
    public int adminPort() {
        return admin == null ? -1 : admin.port();
    }

    /** The metrics endpoint's port, or -1 when it is off. */
    public int metricsPort() {
        return metricsServer == null ? -1 : metricsServer.port();
    }

    /** Where each endpoint listens, for the start-up log line. */
    public String describe(RouterConfig config) {
        return "admin=" + (admin == null ? "off" : config.admin().bindAddress() + ":" + admin.port())
                + ", metrics=" + (metricsServer == null ? "off"
                : config.metrics().bindAddress() + ":" + metricsServer.port());
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        if (metricsServer != null) {
            metricsServer.close();
        }
    }
}
