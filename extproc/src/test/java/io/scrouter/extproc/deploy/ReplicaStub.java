package io.scrouter.extproc.deploy;

import com.sun.net.httpserver.HttpServer;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.scrouter.testkit.grpc.RawBytes;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A stand-in Spark Connect replica: answers {@code SparkConnectService/Config} with its own id, and serves
 * an idle Spark REST API so the service's load probe sees a healthy, empty driver.
 */
final class ReplicaStub implements AutoCloseable {

    static final String SERVICE = "spark.connect.SparkConnectService";

    /** Raw bytes both ways: the test needs the wire path and the answer, not Spark's protos. */
    static final MethodDescriptor<byte[], byte[]> CONFIG = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Config"))
            .setRequestMarshaller(RawBytes.INSTANCE)
            .setResponseMarshaller(RawBytes.INSTANCE)
            .build();

    /** Answers its id after {@link #SLOW_MILLIS}: a call long enough to restart the router in the middle of. */
    static final MethodDescriptor<byte[], byte[]> SLOW = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "ExecutePlan"))
            .setRequestMarshaller(RawBytes.INSTANCE)
            .setResponseMarshaller(RawBytes.INSTANCE)
            .build();
    static final long SLOW_MILLIS = 8_000;
    /** Slow calls that reached any stub replica: a test waits for its call to be running. */
    static final java.util.concurrent.atomic.AtomicInteger SLOW_CALLS_STARTED =
            new java.util.concurrent.atomic.AtomicInteger();

    /** Client streaming, as AddArtifacts: answers {@code <id>:<bytes received>}. */
    static final MethodDescriptor<byte[], byte[]> UPLOAD = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.CLIENT_STREAMING)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "AddArtifacts"))
            .setRequestMarshaller(RawBytes.INSTANCE)
            .setResponseMarshaller(RawBytes.INSTANCE)
            .build();

    private static final String APP = "app-stub";

    private final String id;
    private final Server grpc;
    private final HttpServer rest;

    private ReplicaStub(String id, Server grpc, HttpServer rest) {
        this.id = id;
        this.grpc = grpc;
        this.rest = rest;
    }

    static ReplicaStub start(String id) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder(SERVICE)
                .addMethod(CONFIG, ServerCalls.asyncUnaryCall((request, reply) -> {
                    reply.onNext(id.getBytes(StandardCharsets.UTF_8));
                    reply.onCompleted();
                }))
                .addMethod(SLOW, ServerCalls.asyncUnaryCall((request, reply) -> {
                    SLOW_CALLS_STARTED.incrementAndGet();
                    Thread t = new Thread(() -> {
                        try {
                            Thread.sleep(SLOW_MILLIS);
                        } catch (InterruptedException e) {
                            return;
                        }
                        reply.onNext(id.getBytes(StandardCharsets.UTF_8));
                        reply.onCompleted();
                    });
                    t.setDaemon(true);
                    t.start();
                }))
                .addMethod(UPLOAD, ServerCalls.asyncClientStreamingCall(
                        (io.grpc.stub.StreamObserver<byte[]> reply) -> new io.grpc.stub.StreamObserver<byte[]>() {
                    long bytes;

                    @Override
                    public void onNext(byte[] chunk) {
                        bytes += chunk.length;
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        reply.onNext((id + ":" + bytes).getBytes(StandardCharsets.UTF_8));
                        reply.onCompleted();
                    }
                }))
                .build();
        Server grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .maxInboundMessageSize(64 << 20)
                .addService(service)
                .build()
                .start();
        HttpServer rest = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        rest.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            String body = switch (path) {
                case "/api/v1/applications" -> "[{\"id\":\"" + APP + "\",\"name\":\"stub\"}]";
                case "/api/v1/applications/" + APP + "/executors" ->
                        "[{\"id\":\"driver\",\"isActive\":true,\"maxTasks\":2,\"activeTasks\":0}]";
                case "/api/v1/applications/" + APP + "/stages", "/api/v1/applications/" + APP + "/jobs" -> "[]";
                default -> null;
            };
            byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(body == null ? 404 : 200, bytes.length == 0 ? -1 : bytes.length);
            try (var out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        rest.start();
        return new ReplicaStub(id, grpc, rest);
    }

    String id() {
        return id;
    }

    String grpcAddress() {
        return "127.0.0.1:" + grpc.getPort();
    }

    String metricsUrl() {
        return "http://127.0.0.1:" + rest.getAddress().getPort();
    }

    @Override
    public void close() {
        rest.stop(0);
        grpc.shutdownNow();
    }

    /** A request with {@code session_id} first and {@code padding} bytes after it (field 2), as an upload. */
    static byte[] requestFor(String sessionId, int padding) {
        byte[] head = requestFor(sessionId);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.writeBytes(head);
        out.write(0x12);
        int n = padding;
        while ((n & ~0x7F) != 0) {
            out.write((n & 0x7F) | 0x80);
            n >>>= 7;
        }
        out.write(n);
        out.writeBytes(new byte[padding]);
        return out.toByteArray();
    }

    /** A Spark Connect request message: {@code session_id} is field 1, first on the wire. */
    static byte[] requestFor(String sessionId) {
        byte[] id = sessionId.getBytes(StandardCharsets.UTF_8);
        if (id.length > 127) {
            throw new IllegalArgumentException("session id too long for a one-byte length");
        }
        byte[] message = new byte[id.length + 2];
        message[0] = 0x0A;
        message[1] = (byte) id.length;
        System.arraycopy(id, 0, message, 2, id.length);
        return message;
    }
}
