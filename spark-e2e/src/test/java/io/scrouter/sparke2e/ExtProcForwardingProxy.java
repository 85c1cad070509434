package io.scrouter.sparke2e;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
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
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.testkit.grpc.RawBytes;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Stands in for Envoy where there is no Envoy binary: a plaintext HTTP/2 gRPC proxy on loopback that does,
 * for every call, what the shipped Envoy configs do for our purpose. Test code only; not part of the product.
 *
 * <ol>
 *   <li>Drops a client-sent route header (Envoy's early header mutation).</li>
 *   <li>Opens one ext_proc {@code Process} stream to the router over real gRPC and sends the request headers,
 *       values in {@code raw_value} only.</li>
 *   <li>An {@code ImmediateResponse} ends the call with its gRPC status and message. A {@code mode_override}
 *       asking for the request body sends the first request message, gRPC-framed, as the body (what
 *       {@code BUFFERED_PARTIAL} delivers for a Spark request) and takes the route from the body answer.</li>
 *   <li>Forwards the call's messages unchanged, both ways, to the {@code ip:port} of the route header (the
 *       {@code ORIGINAL_DST} cluster), with the client's metadata.</li>
 * </ol>
 * Every routed call is recorded (method, session, upstream, header or body) so tests can check affinity.
 */
final class ExtProcForwardingProxy implements AutoCloseable {

    /** One call as the proxy handled it: routed to {@code upstream}, or rejected with {@code status}. */
    record RoutedCall(String method, String sessionId, boolean routedFromBody, String upstream, Status.Code status,
                      String message) {
    }

    private static final Metadata.Key<String> UPSTREAM =
            Metadata.Key.of(RouteHeaders.UPSTREAM, Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> SESSION =
            Metadata.Key.of(RouteHeaders.SESSION_ID, Metadata.ASCII_STRING_MARSHALLER);
    private static final long EXT_PROC_TIMEOUT_SECONDS = 5;


    private final Server server;
    private final ExecutorService callExecutor = Executors.newFixedThreadPool(8, r -> {
        Thread t = new Thread(r, "forwarding-proxy");
        t.setDaemon(true);
        return t;
    });
    private final ManagedChannel extProcChannel;
    private final ExternalProcessorGrpc.ExternalProcessorStub extProc;
    private final ConcurrentMap<String, ManagedChannel> upstreams = new ConcurrentHashMap<>();
    private final List<RoutedCall> calls = new CopyOnWriteArrayList<>();

    ExtProcForwardingProxy(int extProcPort) throws IOException {
        extProcChannel = NettyChannelBuilder.forAddress("127.0.0.1", extProcPort).usePlaintext().build();
        extProc = ExternalProcessorGrpc.newStub(extProcChannel);
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .executor(callExecutor)
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
                        ServerCallHandler<byte[], byte[]> handler = (call, headers) -> new ProxiedCall(call, headers)
                                .start();
                        return ServerMethodDefinition.create(method, handler);
                    }
                })
                .build()
                .start();
    }

    int port() {
        return server.getPort();
    }

    /** Every call handled so far, in arrival order. */
    List<RoutedCall> calls() {
        return List.copyOf(calls);
    }

    List<RoutedCall> callsOf(String sessionId) {
        return calls.stream().filter(c -> sessionId.equals(c.sessionId())).toList();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow();
        upstreams.values().forEach(ManagedChannel::shutdownNow);
        extProcChannel.shutdownNow();
        callExecutor.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    /** One ext_proc stream, driven synchronously: the proxy's call threads may block, Envoy's may not. */
    private final class ExtProcExchange {
        private final BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
        private final StreamObserver<ProcessingRequest> out;

        ExtProcExchange() {
            out = extProc.process(new StreamObserver<>() {
                @Override
                public void onNext(ProcessingResponse value) {
                    answers.add(value);
                }

                @Override
                public void onError(Throwable t) {
                    answers.add(t);
                }

                @Override
                public void onCompleted() {
                    answers.add(Status.Code.OK);
                }
            });
        }

        ProcessingResponse send(ProcessingRequest request) throws Exception {
            out.onNext(request);
            Object answer = answers.poll(EXT_PROC_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (answer instanceof ProcessingResponse r) {
                return r;
            }
            if (answer instanceof Throwable t) {
                throw new IllegalStateException("ext_proc stream failed", t);
            }
            throw new IllegalStateException("ext_proc gave no answer within " + EXT_PROC_TIMEOUT_SECONDS + " s ("
                    + answer + ")");
        }

        void close() {
            try {
                out.onCompleted();
            } catch (RuntimeException ignored) {
                // already closed by the other side
            }
        }
    }

    /** One proxied call. Listener callbacks of one call never run concurrently (grpc serialises them). */
    private final class ProxiedCall extends ServerCall.Listener<byte[]> {
        private final ServerCall<byte[], byte[]> downstream;
        private final Metadata headers;
        private final String method;
        private final Object downstreamLock = new Object();
        private ExtProcExchange exchange;
        private String sessionId;
        private boolean awaitingBody;
        private ClientCall<byte[], byte[]> upstream;
        private boolean halfClosedEarly;
        private volatile boolean closed;

        ProxiedCall(ServerCall<byte[], byte[]> downstream, Metadata headers) {
            this.downstream = downstream;
            this.headers = headers;
            String full = downstream.getMethodDescriptor().getFullMethodName();
            this.method = full.substring(full.lastIndexOf('/') + 1);
        }

        ServerCall.Listener<byte[]> start() {
            headers.removeAll(UPSTREAM);
            sessionId = headers.get(SESSION);
            exchange = new ExtProcExchange();
            try {
                ProcessingResponse answer = exchange.send(ProcessingRequest.newBuilder()
                        .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(envoyHeaders()).setEndOfStream(false))
                        .build());
                if (answer.hasImmediateResponse()) {
                    reject(answer, false);
                } else if (answer.hasModeOverride()
                        && answer.getModeOverride().getRequestBodyMode() != ProcessingMode.BodySendMode.NONE) {
                    awaitingBody = true;
                } else {
                    route(routeOf(answer.getRequestHeaders().getResponse()), false);
                }
            } catch (Exception e) {
                fail(e);
            }
            if (!closed) {
                downstream.request(Integer.MAX_VALUE);
            }
            return this;
        }

        @Override
        public void onMessage(byte[] message) {
            if (awaitingBody) {
                awaitingBody = false;
                sessionId = sessionIdOf(message);
                try {
                    // BUFFERED_PARTIAL sends the whole first buffer; for a Spark request that is the one message.
                    ProcessingResponse answer = exchange.send(ProcessingRequest.newBuilder()
                            .setRequestBody(HttpBody.newBuilder().setBody(ByteString.copyFrom(framed(message)))
                                    .setEndOfStream(false))
                            .build());
                    if (answer.hasImmediateResponse()) {
                        reject(answer, true);
                        return;
                    }
                    route(routeOf(answer.getRequestBody().getResponse()), true);
                } catch (Exception e) {
                    fail(e);
                    return;
                }
                if (upstream == null) {
                    return;
                }
                upstream.sendMessage(message);
                if (halfClosedEarly) {
                    upstream.halfClose();
                }
                return;
            }
            if (upstream != null) {
                upstream.sendMessage(message);
            }
        }

        @Override
        public void onHalfClose() {
            if (upstream != null) {
                upstream.halfClose();
            } else if (awaitingBody) {
                halfClosedEarly = true;
            }
        }

        @Override
        public void onCancel() {
            if (upstream != null) {
                upstream.cancel("downstream cancelled", null);
            }
            exchange.close();
        }

        @Override
        public void onComplete() {
            exchange.close();
        }

        private HeaderMap envoyHeaders() {
            HeaderMap.Builder map = HeaderMap.newBuilder();
            add(map, ":method", "POST");
            add(map, ":scheme", "http");
            add(map, ":authority", downstream.getAuthority() == null ? "localhost" : downstream.getAuthority());
            add(map, ":path", "/" + downstream.getMethodDescriptor().getFullMethodName());
            add(map, "content-type", "application/grpc");
            add(map, "te", "trailers");
            for (String key : headers.keys()) {
                if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                    for (byte[] v : headers.getAll(Metadata.Key.of(key, Metadata.BINARY_BYTE_MARSHALLER))) {
                        add(map, key, Base64.getEncoder().withoutPadding().encodeToString(v));
                    }
                } else if (!key.equals("content-type") && !key.equals("te")) {
                    for (String v : headers.getAll(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER))) {
                        add(map, key, v);
                    }
                }
            }
            return map.build();
        }

        private void route(String address, boolean fromBody) {
            exchange.close();
            if (address == null) {
                // ORIGINAL_DST without a destination: Envoy answers 503, gRPC UNAVAILABLE.
                record(fromBody, null, Status.Code.UNAVAILABLE, "no route header");
                closeDownstream(Status.UNAVAILABLE.withDescription("no upstream host (route header not set)"),
                        new Metadata());
                return;
            }
            record(fromBody, address, Status.Code.OK, null);
            int colon = address.lastIndexOf(':');
            ManagedChannel channel = upstreams.computeIfAbsent(address, a -> NettyChannelBuilder
                    .forAddress(a.substring(0, colon), Integer.parseInt(a.substring(colon + 1)))
                    .usePlaintext().maxInboundMessageSize(128 << 20).build());
            upstream = channel.newCall(downstream.getMethodDescriptor(), CallOptions.DEFAULT);
            upstream.start(new ClientCall.Listener<>() {
                @Override
                public void onHeaders(Metadata responseHeaders) {
                    synchronized (downstreamLock) {
                        downstream.sendHeaders(responseHeaders);
                    }
                }

                @Override
                public void onMessage(byte[] message) {
                    synchronized (downstreamLock) {
                        downstream.sendMessage(message);
                    }
                }

                @Override
                public void onClose(Status status, Metadata trailers) {
                    closeDownstream(status, trailers);
                }
            }, headers);
            upstream.request(Integer.MAX_VALUE);
        }

        private void reject(ProcessingResponse answer, boolean fromBody) {
            exchange.close();
            var immediate = answer.getImmediateResponse();
            Status status = Status.fromCodeValue(immediate.getGrpcStatus().getStatus())
                    .withDescription(immediate.getBody().toString(StandardCharsets.UTF_8));
            record(fromBody, null, status.getCode(), status.getDescription());
            closeDownstream(status, new Metadata());
        }

        private void fail(Exception e) {
            exchange.close();
            record(awaitingBody, null, Status.Code.INTERNAL, e.toString());
            // failure_mode_allow: false, so Envoy fails the request rather than let it through unrouted.
            closeDownstream(Status.INTERNAL.withDescription("ext_proc failed: " + e), new Metadata());
        }

        private void record(boolean fromBody, String address, Status.Code code, String message) {
            calls.add(new RoutedCall(method, sessionId, fromBody, address, code, message));
        }

        private void closeDownstream(Status status, Metadata trailers) {
            synchronized (downstreamLock) {
                closed = true;
                try {
                    downstream.close(status, trailers);
                } catch (IllegalStateException alreadyClosed) {
                    // the client went away first
                }
            }
        }
    }

    private static void add(HeaderMap.Builder map, String key, String value) {
        map.addHeaders(HeaderValue.newBuilder().setKey(key)
                .setRawValue(ByteString.copyFrom(value, StandardCharsets.ISO_8859_1)));
    }

    /** The route the answer sets: our header's raw value, or null. */
    private static String routeOf(CommonResponse response) {
        for (HeaderValueOption option : response.getHeaderMutation().getSetHeadersList()) {
            if (option.getHeader().getKey().equals(RouteHeaders.UPSTREAM)) {
                return option.getHeader().getRawValue().toString(StandardCharsets.US_ASCII);
            }
        }
        return null;
    }

    private static byte[] framed(byte[] message) {
        return ByteBuffer.allocate(5 + message.length).put((byte) 0).putInt(message.length).put(message).array();
    }

    /** Field 1 of a Spark Connect request, for the record only (the router reads it itself). */
    private static String sessionIdOf(byte[] message) {
        if (message.length > 2 && message[0] == 0x0A && message[1] > 0 && message[1] + 2 <= message.length) {
            return new String(message, 2, message[1], StandardCharsets.UTF_8);
        }
        return null;
    }

    static List<String> methods(List<RoutedCall> calls) {
        List<String> out = new ArrayList<>();
        calls.forEach(c -> out.add(c.method()));
        return out;
    }
}
