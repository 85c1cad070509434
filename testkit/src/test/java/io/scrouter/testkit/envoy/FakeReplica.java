package io.scrouter.testkit.envoy;

import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.scrouter.testkit.grpc.RawBytes;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A replica for the stand-in's tests: any method; it records each call's headers and request bytes, and answers
 * with the total request size after the client half-closes. With {@link #holdResponses()} it sends its response
 * headers and then waits for {@link #release()} before the message and trailers, so a test can act in the middle
 * of a long call.
 */
final class FakeReplica implements AutoCloseable {

    /** One call as the replica received it. */
    record Received(String method, Metadata headers, long requestBytes, int requestMessages) {
    }

    private final Server server;
    final List<Received> calls = new CopyOnWriteArrayList<>();
    final List<String> cancelled = new CopyOnWriteArrayList<>();
    private volatile boolean hold;
    private volatile boolean sendHeadersEarly;
    private volatile CountDownLatch released = new CountDownLatch(0);
    final CountDownLatch started = new CountDownLatch(1);

    FakeReplica() throws IOException {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .fallbackHandlerRegistry(new HandlerRegistry() {
                    @Override
                    public ServerMethodDefinition<?, ?> lookupMethod(String name, String authority) {
                        MethodDescriptor<byte[], byte[]> m = MethodDescriptor.<byte[], byte[]>newBuilder()
                                .setFullMethodName(name).setType(MethodDescriptor.MethodType.UNKNOWN)
                                .setRequestMarshaller(RawBytes.INSTANCE).setResponseMarshaller(RawBytes.INSTANCE)
                                .build();
                        ServerCallHandler<byte[], byte[]> handler = FakeReplica.this::serve;
                        return ServerMethodDefinition.create(m, handler);
                    }
                })
                .build().start();
    }

    private ServerCall.Listener<byte[]> serve(ServerCall<byte[], byte[]> call, Metadata headers) {
        call.request(Integer.MAX_VALUE);
        String method = call.getMethodDescriptor().getFullMethodName();
        if (hold && sendHeadersEarly) {
            call.sendHeaders(new Metadata());
        }
        started.countDown();
        return new ServerCall.Listener<>() {
            long bytes;
            int messages;

            @Override
            public void onMessage(byte[] message) {
                bytes += message.length;
                messages++;
            }

            @Override
            public void onHalfClose() {
                calls.add(new Received(method, headers, bytes, messages));
                Thread t = new Thread(() -> {
                    try {
                        if (hold) {
                            released.await(60, TimeUnit.SECONDS);
                        }
                        if (!(hold && sendHeadersEarly)) {
                            call.sendHeaders(new Metadata());
                        }
                        call.sendMessage(Long.toString(bytes).getBytes());
                        call.close(Status.OK, new Metadata());
                    } catch (InterruptedException | IllegalStateException e) {
                        // cancelled meanwhile
                    }
                });
                t.setDaemon(true);
                t.start();
            }

            @Override
            public void onCancel() {
                cancelled.add(method);
            }
        };
    }

    /** Calls from now on wait for {@link #release()}; with {@code headersFirst} their response has begun. */
    void holdResponses(boolean headersFirst) {
        released = new CountDownLatch(1);
        sendHeadersEarly = headersFirst;
        hold = true;
    }

    void release() {
        released.countDown();
    }

    String address() {
        return "127.0.0.1:" + server.getPort();
    }

    @Override
    public void close() {
        release();
        server.shutdownNow();
    }
}
