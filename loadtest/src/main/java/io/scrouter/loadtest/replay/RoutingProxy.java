package io.scrouter.loadtest.replay;

import io.scrouter.testkit.envoy.EnvoyStandIn;
import io.scrouter.testkit.envoy.RecordedCall;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Envoy in the real-Spark check, where there is no Envoy binary: the Envoy stand-in running the shipped
 * {@code envoy/envoy.yaml} in front of the router, which records where each session's calls went.
 */
final class RoutingProxy implements AutoCloseable {

    private final EnvoyStandIn envoy;

    RoutingProxy(int extProcPort) throws IOException {
        envoy = EnvoyStandIn.start(bootstrap(), List.of(new InetSocketAddress("127.0.0.1", extProcPort)));
        var check = envoy.model().healthCheck();
        try {
            if (!envoy.awaitHealthyExtProc(1, check.interval().plus(check.timeout()).multipliedBy(15))) {
                throw new IOException("the router on port " + extProcPort + " never passed Envoy's health check");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the router", e);
        }
    }

    private static Path bootstrap() throws IOException {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("envoy/envoy.yaml"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IOException("run from inside the repository: envoy/envoy.yaml not found above "
                    + Path.of("").toAbsolutePath());
        }
        return dir.resolve("envoy/envoy.yaml");
    }

    int port() {
        return envoy.port();
    }

    /** Session id → the upstream its calls went to (the last one; a moved session is counted by {@link #movedSessions}). */
    Map<String, String> sessionUpstreams() {
        Map<String, String> out = new HashMap<>();
        for (RecordedCall c : envoy.calls()) {
            if (c.session() != null && c.upstream() != null) {
                out.put(c.session(), c.upstream());
            }
        }
        return out;
    }

    /** Sessions whose calls went to more than one upstream. */
    int movedSessions() {
        Map<String, String> first = new HashMap<>();
        Set<String> moved = new HashSet<>();
        for (RecordedCall c : envoy.calls()) {
            if (c.session() != null && c.upstream() != null) {
                String before = first.putIfAbsent(c.session(), c.upstream());
                if (before != null && !before.equals(c.upstream())) {
                    moved.add(c.session());
                }
            }
        }
        return moved.size();
    }

    @Override
    public void close() throws InterruptedException {
        envoy.close();
    }
}
