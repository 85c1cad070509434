package io.scrouter.extproc;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.envoy.ExtProcService;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.envoy.StreamLimits;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Request;
import io.scrouter.extproc.routing.SessionRouter;
import io.scrouter.extproc.runtime.TimeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the decision path before the router reports ready, so that the first requests Envoy sends are not the
 * ones that load classes and compile code: a cold router answered its first requests in well over Envoy's
 * 200 ms {@code message_timeout}.
 *
 * <p>It sends real ext_proc streams over loopback HTTP/2 to a throw-away server built from the same parts as
 * the real one (gRPC on Netty, {@code ProcessStream}, the answers) whose decisions are
 * {@link SessionRouter#dryRun dry runs}: the placement policy runs on the live pool, but nothing is bound,
 * cached, counted or exported. Header mode, body mode and rejections are all exercised. The streams come from
 * {@link WarmupConnection}, a client that shares no code with the server's network stack, so that the budget is
 * spent compiling the server alone (that class gives the figures).
 */
final class Warmup {

    private static final Logger LOG = LoggerFactory.getLogger(Warmup.class);

    /** Enough for the JIT's first tier to compile the hot path; well under a second on an idle core. */
    static final int STREAMS = 1000;
    private static final int IN_FLIGHT = 16;
    /** Warm-up never holds a start for longer than this, however busy the machine. */
    static final long BUDGET_MILLIS = 5_000;
    /** Answers a dry run without replicas with: never written to a real request. */
    private static final Replica NOWHERE = new Replica("warmup", "127.0.0.1:1", null, ReplicaState.READY);

    private Warmup() {
    }

    /**
     * Runs the warm-up; returns how many streams the service answered (at most {@link #STREAMS}). Never throws: a
     * cold start is not fatal.
     *
     * @param group a request group the configuration allows, sent on the warm-up requests so that they reach
     *              placement; null without groups
     */
    static int run(SessionRouter router, StreamLimits limits, TimeSource time, String group) {
        long started = System.nanoTime();
        Server server = null;
        int sent = 0;
        int answered = 0;
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .directExecutor()
                    .maxInboundMessageSize(limits.maxInboundMessageBytes())
                    .addService(new ExtProcService(request -> CompletableFuture.completedFuture(
                            dryRun(router, request)), DecisionObserver.NONE, limits, time))
                    .build().start();
            long deadline = started + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
            try (WarmupConnection connection = new WarmupConnection(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort()), STREAMS, deadline)) {
                try {
                    while (sent < STREAMS) {
                        int batch = Math.min(IN_FLIGHT, STREAMS - sent);
                        for (int i = 0; i < batch; i++) {
                            connection.send(messages(sent + i, group));
                        }
                        sent += batch;
                        connection.awaitAllEnded();
                    }
                } finally {
                    answered = connection.answered();
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("warming the decision path stopped after {} of {} streams were answered ({}); the first "
                    + "requests may be slow", answered, STREAMS, e.toString());
        } finally {
            if (server != null) {
                server.shutdownNow();
            }
        }
        LOG.info("warmed the decision path with {} answered ext_proc streams in {} ms", answered,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        return answered;
    }

    private static Decision dryRun(SessionRouter router, Request request) {
        Decision d = router.dryRun(request);
        if (d instanceof Decision.Reject reject && reject.reason().equals("no_ready_replica")) {
            return new Decision.Route(NOWHERE, Decision.Outcome.PLACED);
        }
        return d;
    }

    /** The messages of one stream of one of four shapes: header route, body route, header rejection, body rejection. */
    private static List<ProcessingRequest> messages(int i, String group) {
        String session = UUID.randomUUID().toString();
        boolean body = i % 4 >= 2;
        boolean reject = i % 2 == 1;
        String id = reject ? "not-a-uuid" : session;
        List<String[]> headers = ExtProcClient.sparkCall("ExecutePlan", body ? null : id);
        if (group != null) {
            headers.add(new String[] {RouteHeaders.GROUP, group});
        }
        List<ProcessingRequest> messages = new ArrayList<>();
        messages.add(ExtProcClient.headersRequest(headers));
        if (body) {
            byte[] bytes = id.getBytes(StandardCharsets.US_ASCII);
            ByteBuffer frame = ByteBuffer.allocate(5 + 2 + bytes.length).put((byte) 0).putInt(2 + bytes.length)
                    .put((byte) 0x0A).put((byte) bytes.length).put(bytes);
            messages.add(ExtProcClient.bodyRequest(ByteString.copyFrom(frame.array()), true));
        }
        return messages;
    }
}
