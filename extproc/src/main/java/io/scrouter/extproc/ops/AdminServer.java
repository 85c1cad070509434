package io.scrouter.extproc.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.scrouter.extproc.routing.SessionIds;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.SessionStore;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The operator's view, on loopback by default: the pool with every score input, one session's placement,
 * and liveness/readiness. JSON under {@code /api/}, a small page at {@code /}.
 *
 * <ul>
 *   <li>{@code GET /healthz}: 200 while the process serves.</li>
 *   <li>{@code GET /readyz}: 200 when the pool has at least one replica and the router is not draining, else
 *       503 with the reason.</li>
 *   <li>{@code GET /api/pool}: replicas, states, utilisation, sample age, sessions, score; router flags.</li>
 *   <li>{@code GET /api/sessions/<uuid>}: the session's binding in this router's cache and in the store.</li>
 * </ul>
 */
public final class AdminServer implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService executor;
    private final RouterStatus status;
    private final SessionStore store;

    public AdminServer(String bindAddress, int port, RouterStatus status, SessionStore store) throws IOException {
        this.status = status;
        this.store = store;
        this.server = HttpServer.create(new InetSocketAddress(bindAddress, port), 16);
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "scrouter-admin");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/healthz", ex -> send(ex, 200, "text/plain", "ok\n"));
        server.createContext("/readyz", this::ready);
        server.createContext("/api/pool", ex -> send(ex, 200, "application/json", poolJson().toPrettyString()));
        server.createContext("/api/sessions/", this::session);
        server.createContext("/", this::page);
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void ready(HttpExchange ex) throws IOException {
        int replicas = status.replicas().size();
        boolean ready = replicas > 0 && !status.draining();
        ObjectNode body = JSON.createObjectNode();
        body.put("ready", ready);
        body.put("replicas", replicas);
        if (status.draining()) {
            body.put("reason", "draining: the router is stopping and still answers until it has stopped");
        } else if (replicas == 0) {
            body.put("reason", "the pool is empty: no replica published in the instance store"
                    + (status.poolError() == null ? "" : " (last read failed: " + status.poolError() + ")"));
        }
        send(ex, ready ? 200 : 503, "application/json", body.toPrettyString());
    }

    ObjectNode poolJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("policy", status.policy());
        root.put("degradedPlacement", status.degraded());
        root.put("storeCircuitOpen", status.storeCircuitOpen());
        root.put("poolReadAgeMillis", status.poolReadAgeMillis());
        root.put("poolError", status.poolError());
        root.put("nearCacheSessions", status.nearCache().size());
        ArrayNode replicas = root.putArray("replicas");
        for (ReplicaView v : status.replicas()) {
            ObjectNode n = replicas.addObject();
            n.put("id", v.id());
            n.put("group", v.group());
            n.put("grpc", v.grpcAddress());
            n.put("metricsUrl", v.metricsUrl());
            n.put("state", v.state());
            putNumber(n, "utilisation", v.utilisation());
            putNumber(n, "lastUtilisation", v.lastUtilisation());
            n.put("fresh", v.fresh());
            n.put("sampleAgeMillis", v.sampleAgeMillis());
            n.put("consecutiveProbeFailures", v.consecutiveFailures());
            n.put("probeFailures", v.probeFailures());
            n.put("lastProbeError", v.lastError());
            n.put("activeSessions", v.activeSessions());
            n.put("placementsSinceSample", v.placementsSinceSample());
            putNumber(n, "score", v.score());
        }
        ArrayNode groups = root.putArray("groups");
        for (GroupView g : status.groups()) {
            ObjectNode n = groups.addObject();
            n.put("group", g.group());
            n.put("replicas", g.replicas());
            n.put("readyReplicas", g.readyReplicas());
            n.put("activeSessions", g.activeSessions());
            putNumber(n, "utilisation", g.utilisation());
            if (g.maxSessionsPerReplica() >= 0) {
                n.put("maxSessionsPerReplica", g.maxSessionsPerReplica());
            } else {
                n.putNull("maxSessionsPerReplica");
            }
            n.put("fullRefusals", g.fullRefusals());
        }
        return root;
    }

    private static void putNumber(ObjectNode n, String key, double value) {
        if (Double.isFinite(value)) {
            n.put(key, value);
        } else {
            n.putNull(key);
        }
    }

    private void session(HttpExchange ex) throws IOException {
        String id = ex.getRequestURI().getPath().substring("/api/sessions/".length());
        if (!SessionIds.isValid(id)) {
            send(ex, 400, "application/json", "{\"error\":\"give a session id in UUID form: /api/sessions/<uuid>\"}\n");
            return;
        }
        ObjectNode body = JSON.createObjectNode();
        body.put("session", SessionIds.canonical(id));
        Optional<Binding> cached = status.nearCache().binding(id);
        putBinding(body, "cached", cached);
        try {
            putBinding(body, "store", store.find(SessionIds.canonical(id)).get(2, TimeUnit.SECONDS));
        } catch (Exception e) {
            body.put("storeError", e.toString());
        }
        send(ex, 200, "application/json", body.toPrettyString());
    }

    private static void putBinding(ObjectNode body, String key, Optional<Binding> binding) {
        if (binding.isEmpty()) {
            body.putNull(key);
            return;
        }
        ObjectNode b = body.putObject(key);
        b.put("replica", binding.get().replicaId());
        b.put("lost", binding.get().lost());
    }

    private void page(HttpExchange ex) throws IOException {
        if (!ex.getRequestURI().getPath().equals("/")) {
            send(ex, 404, "text/plain", "not found; try /, /api/pool, /api/sessions/<uuid>, /healthz, /readyz\n");
            return;
        }
        StringBuilder html = new StringBuilder("""
                <!doctype html><html><head><meta charset="utf-8"><title>scrouter</title>
                <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}
                td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#eee}
                .bad{color:#b00}</style></head><body><h1>scrouter router</h1>
                """);
        html.append("<p>policy <b>").append(esc(status.policy())).append("</b>");
        if (status.degraded()) {
            html.append(" &middot; <span class=bad>degraded placement: no fresh load metrics</span>");
        }
        if (status.storeCircuitOpen()) {
            html.append(" &middot; <span class=bad>session store unreachable: rendezvous fallback</span>");
        }
        html.append("</p><table><tr><th>replica</th><th>group</th><th>gRPC</th><th>state</th><th>utilisation</th><th>fresh</th>"
                + "<th>sample age (ms)</th><th>probe failures</th><th>sessions</th><th>score</th><th>last error</th></tr>");
        List<ReplicaView> views = status.replicas();
        for (ReplicaView v : views) {
            html.append("<tr><td>").append(esc(v.id())).append("</td><td>").append(esc(v.group()))
                    .append("</td><td>").append(esc(v.grpcAddress()))
                    .append("</td><td>").append(esc(v.state())).append("</td><td>").append(fmt(v.utilisation()))
                    .append("</td><td>").append(v.fresh() ? "yes" : "<span class=bad>no</span>")
                    .append("</td><td>").append(v.sampleAgeMillis() < 0 ? "never" : Long.toString(v.sampleAgeMillis()))
                    .append("</td><td>").append(v.probeFailures()).append("</td><td>").append(v.activeSessions())
                    .append("</td><td>").append(fmt(v.score())).append("</td><td>")
                    .append(esc(v.lastError() == null ? "" : v.lastError())).append("</td></tr>");
        }
        html.append("</table><p>").append(views.size()).append(" replicas &middot; JSON: <a href=\"/api/pool\">"
                + "/api/pool</a>, /api/sessions/&lt;uuid&gt;</p></body></html>\n");
        send(ex, 200, "text/html; charset=utf-8", html.toString());
    }

    private static String fmt(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3f", v) : "-";
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", type);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
