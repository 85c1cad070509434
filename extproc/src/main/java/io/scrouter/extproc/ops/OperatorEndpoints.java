package io.scrouter.extproc.ops;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.session.SessionStore;

import java.io.IOException;

/**
 * The router's HTTP endpoints for operators: the admin view ({@code admin.port}) and the Prometheus metrics
 * ({@code metrics.port}), each started only when its port is configured (not -1), and closed together.
 */
public final class OperatorEndpoints implements AutoCloseable {

    private final AdminServer admin;
    private final HTTPServer metricsServer;

    private OperatorEndpoints(AdminServer admin, HTTPServer metricsServer) {
        this.admin = admin;
        this.metricsServer = metricsServer;
    }

    /** Starts the endpoints {@code config} turns on. */
    public static OperatorEndpoints start(RouterConfig config, RouterStatus status, RouterMetrics metrics,
                                          SessionStore sessions) throws IOException {
        AdminServer admin = config.admin().port() < 0 ? null
                : new AdminServer(config.admin().bindAddress(), config.admin().port(), status, sessions);
        HTTPServer metricsServer = null;
        try {
            if (config.metrics().port() >= 0) {
                metricsServer = HTTPServer.builder().hostname(config.metrics().bindAddress())
                        .port(config.metrics().port()).registry(metrics.registry()).buildAndStart();
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
        return metricsServer == null ? -1 : metricsServer.getPort();
    }

    /** Where each endpoint listens, for the start-up log line. */
    public String describe(RouterConfig config) {
        return "admin=" + (admin == null ? "off" : config.admin().bindAddress() + ":" + admin.port())
                + ", metrics=" + (metricsServer == null ? "off"
                : config.metrics().bindAddress() + ":" + metricsServer.getPort());
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
