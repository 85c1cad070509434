package io.scrouter.extproc;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.envoy.ExtProcService;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.envoy.StreamLimits;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.SessionRouter;
import io.scrouter.extproc.runtime.TimeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Runs the decision path before the router reports ready, so that the first requests Envoy sends are not the
 * ones that load classes and compile code: a cold router answered its first requests in well over Envoy's
 * 200 ms {@code message_timeout}.
 *
 * <p>It sends real ext_proc streams over loopback HTTP/2 to a throw-away server built from the same parts as
 * the real one (gRPC on Netty, {@code ProcessStream}, the answers) whose decisions are
 * {@link SessionRouter#dryRun dry runs}: the placement policy runs on the live pool, but nothing is bound,
 * cached, counted or exported. Header mode, body mode and rejections are all exercised.
 */
final class Warmup {

    private static final Logger LOG = LoggerFactory.getLogger(Warmup.class);

    /** Enough for the JIT's first tier to compile the hot path; well under a second on an idle core. */
    static final int STREAMS = 1000;
    private static final int IN_FLIGHT = 16;
    /** Warm-up never holds a start for longer than this, however busy the machine. */
    private static final long BUDGET_MILLIS = 5_000;
    /** Answers a dry run without replicas with: never written to a real request. */
    private static final Replica NOWHERE = new Replica("warmup", "127.0.0.1:1", null, ReplicaState.READY);

    private Warmup() {
    }

    /** Runs the warm-up; returns how many streams were answered. Never throws: a cold start is not fatal. */
    static int run(SessionRouter router, StreamLimits limits, TimeSource time) {
        long started = System.nanoTime();
        Server server = null;
        ManagedChannel channel = null;
        int answered = 0;
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .directExecutor()
                    .maxInboundMessageSize(limits.maxInboundMessageBytes())
                    .addService(new ExtProcService((path, id) -> CompletableFuture.completedFuture(dryRun(router,
                            path, id)), DecisionObserver.NONE, limits, time))
                    .build().start();
            channel = NettyChannelBuilder.forAddress(InetAddress.getLoopbackAddress().getHostAddress(),
                    server.getPort()).usePlaintext().directExecutor().build();
            ExternalProcessorGrpc.ExternalProcessorStub stub = ExternalProcessorGrpc.newStub(channel);
            Semaphore inFlight = new Semaphore(IN_FLIGHT);
            long deadline = started + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
            for (int i = 0; i < STREAMS && System.nanoTime() < deadline; i++) {
                if (!inFlight.tryAcquire(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    break;
                }
                exchange(stub, i).whenComplete((n, e) -> inFlight.release());
                answered++;
            }
            inFlight.tryAcquire(IN_FLIGHT, Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (IOException | RuntimeException e) {
            LOG.warn("warming the decision path failed ({}); the first requests may be slow", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (channel != null) {
                channel.shutdownNow();
            }
            if (server != null) {
                server.shutdownNow();
            }
        }
        LOG.info("warmed the decision path with {} ext_proc streams in {} ms", answered,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        return answered;
    }

    private static Decision dryRun(SessionRouter router, String path, String sessionId) {
        Decision d = router.dryRun(path, sessionId);
        if (d instanceof Decision.Reject reject && reject.reason().equals("no_ready_replica")) {
            return new Decision.Route(NOWHERE, Decision.Outcome.PLACED);
        }
        return d;
    }

    /** One stream of one of four shapes: header route, body route, header rejection, body rejection. */
    private static CompletableFuture<Void> exchange(ExternalProcessorGrpc.ExternalProcessorStub stub, int i) {
        String session = UUID.randomUUID().toString();
        boolean body = i % 4 >= 2;
        boolean reject = i % 2 == 1;
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<ProcessingRequest> out = stub.withDeadlineAfter(BUDGET_MILLIS, TimeUnit.MILLISECONDS)
                .process(new StreamObserver<>() {
                    @Override
                    public void onNext(ProcessingResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.complete(null);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        HeaderMap.Builder headers = HeaderMap.newBuilder();
        put(headers, ":method", "POST");
        put(headers, ":path", "/spark.connect.SparkConnectService/ExecutePlan");
        put(headers, "content-type", "application/grpc");
        if (!body) {
            put(headers, RouteHeaders.SESSION_ID, reject ? "not-a-uuid" : session);
        }
        out.onNext(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder().setHeaders(headers))
                .build());
        if (body) {
            byte[] id = (reject ? "not-a-uuid" : session).getBytes(StandardCharsets.US_ASCII);
            ByteBuffer frame = ByteBuffer.allocate(5 + 2 + id.length).put((byte) 0).putInt(2 + id.length)
                    .put((byte) 0x0A).put((byte) id.length).put(id);
            out.onNext(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
                    .setBody(ByteString.copyFrom(frame.array())).setEndOfStream(true)).build());
        }
        out.onCompleted();
        return done;
    }

    private static void put(HeaderMap.Builder headers, String key, String value) {
        headers.addHeaders(HeaderValue.newBuilder().setKey(key)
                .setRawValue(ByteString.copyFrom(value, StandardCharsets.US_ASCII)));
    }
}
