package io.scrouter.loadtest.replay;

import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.testing.EnvoyStandIn;
import io.scrouter.extproc.testing.RawBytes;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Stands in for Envoy in the real-Spark check, where there is no Envoy binary: a plaintext HTTP/2 gRPC proxy
 * on loopback that, for every call, asks the router over a real ext_proc {@code Process} stream (headers only,
 * values in {@code raw_value}: {@link EnvoyStandIn}) and forwards the call's bytes both ways to the
 * {@code ip:port} of the route header, as the shipped configs' {@code ORIGINAL_DST} cluster does. It records
 * where each session's calls went. Header mode only: the check's clients always send the session header
 * (spark-e2e's proxy also covers body mode).
 */
final class RoutingProxy implements AutoCloseable {

    private static final Metadata.Key<String> SESSION =
            Metadata.Key.of(RouteHeaders.SESSION_ID, Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> UPSTREAM =
            Metadata.Key.of(RouteHeaders.UPSTREAM, Metadata.ASCII_STRING_MARSHALLER);

    private final Server server;
    private final ManagedChannel extProcChannel;
    private final EnvoyStandIn envoy;
    private final ExecutorService calls = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "routing-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, ManagedChannel> upstreams = new ConcurrentHashMap<>();
    /** Session id → the upstream its calls went to (the last one; a moved session is counted in {@link #moved}). */
    private final Map<String, String> sessionUpstream = new ConcurrentHashMap<>();
    private final Map<String, Boolean> moved = new ConcurrentHashMap<>();

    RoutingProxy(int extProcPort) throws IOException {
        extProcChannel = NettyChannelBuilder.forAddress("127.0.0.1", extProcPort).usePlaintext().build();
        envoy = new EnvoyStandIn(extProcChannel);
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .executor(calls)
                .maxInboundMessageSize(128 << 20)
                .fallbackHandlerRegistry(new HandlerRegistry() {
                    @Override
                    public ServerMethodDefinition<?, ?> lookupMethod(String fullMethodName, String authority) {
                        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                                .setFullMethodName(fullMethodName)
                                .setType(MethodDescriptor.MethodType.UNKNOWN)
                                .setRequestMarshaller(RawBytes.INSTANCE)
                                .setResponseMarshaller(RawBytes.INSTANCE)
                                .build();
                        ServerCallHandler<byte[], byte[]> handler = (call, headers) -> new Forward(call, headers).start();
                        return ServerMethodDefinition.create(method, handler);
                    }
                })
                .build()
                .start();
    }

    int port() {
        return server.getPort();
    }

    /** Where each session's calls went. */
    Map<String, String> sessionUpstreams() {
        return Map.copyOf(sessionUpstream);
    }

    /** Sessions whose calls reached more than one upstream (must be none). */
    int movedSessions() {
        return moved.size();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        upstreams.values().forEach(ManagedChannel::shutdownNow);
        extProcChannel.shutdownNow();
        calls.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    /** One forwarded call; grpc serialises a listener's callbacks. */
    private final class Forward extends ServerCall.Listener<byte[]> {
        private final ServerCall<byte[], byte[]> downstream;
        private final Metadata headers;
        private final Object lock = new Object();
        private ClientCall<byte[], byte[]> upstream;
        private boolean closed;

        Forward(ServerCall<byte[], byte[]> downstream, Metadata headers) {
            this.downstream = downstream;
            this.headers = headers;
        }

        ServerCall.Listener<byte[]> start() {
            headers.removeAll(UPSTREAM); // Envoy's early header mutation
            String full = downstream.getMethodDescriptor().getFullMethodName();
            String session = headers.get(SESSION);
            try {
                ProcessingResponse answer = envoy.send(EnvoyStandIn.sparkCall(full.substring(full.lastIndexOf('/') + 1),
                        session));
                if (answer.hasImmediateResponse()) {
                    var immediate = answer.getImmediateResponse();
                    close(Status.fromCodeValue(immediate.getGrpcStatus().getStatus())
                            .withDescription(immediate.getBody().toString(StandardCharsets.UTF_8)), new Metadata());
                    return this;
                }
                String address = null;
                for (HeaderValueOption o : answer.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
                    if (o.getHeader().getKey().equals(RouteHeaders.UPSTREAM)) {
                        address = o.getHeader().getRawValue().toString(StandardCharsets.US_ASCII);
                    }
                }
                if (address == null) {
                    close(Status.UNAVAILABLE.withDescription("no upstream host (route header not set)"), new Metadata());
                    return this;
                }
                if (session != null) {
                    String before = sessionUpstream.put(session, address);
                    if (before != null && !before.equals(address)) {
                        moved.put(session, true);
                    }
                }
                forward(address);
            } catch (Exception e) {
                // failure_mode_allow: false: Envoy fails the request rather than let it through unrouted.
                close(Status.INTERNAL.withDescription("ext_proc failed: " + e), new Metadata());
                return this;
            }
            downstream.request(Integer.MAX_VALUE);
            return this;
        }

        private void forward(String address) {
            int colon = address.lastIndexOf(':');
            ManagedChannel channel = upstreams.computeIfAbsent(address, a -> NettyChannelBuilder
                    .forAddress(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1)))
                    .usePlaintext().maxInboundMessageSize(128 << 20).build());
            upstream = channel.newCall(downstream.getMethodDescriptor(), CallOptions.DEFAULT);
            upstream.start(new ClientCall.Listener<>() {
                @Override
                public void onHeaders(Metadata responseHeaders) {
                    synchronized (lock) {
                        if (!closed) {
                            downstream.sendHeaders(responseHeaders);
                        }
                    }
                }

                @Override
                public void onMessage(byte[] message) {
                    synchronized (lock) {
                        if (!closed) {
                            downstream.sendMessage(message);
                        }
                    }
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    close(status, trailers);
                }
            }, headers);
            upstream.request(Integer.MAX_VALUE);
        }

        @Override
        public void onMessage(byte[] message) {
            if (upstream != null) {
                upstream.sendMessage(message);
            }
        }

        @Override
        public void onHalfClose() {
            if (upstream != null) {
                upstream.halfClose();
            }
        }

        @Override
        public void onCancel() {
            if (upstream != null) {
                upstream.cancel("downstream cancelled", null);
            }
        }

        private void close(Status status, Metadata trailers) {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                closed = true;
                try {
                    downstream.close(status, trailers);
                } catch (IllegalStateException alreadyClosed) {
                    // the client went away first
                }
            }
        }
    }
}
