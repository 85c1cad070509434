package io.scrouter.testkit.envoy;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.testkit.grpc.RawBytes;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A gRPC client of any method, bytes in and out: what a Spark Connect client looks like to the stand-in. */
final class RawClient implements AutoCloseable {

    /** How a call ended, with what the client received. */
    record Result(Status status, List<byte[]> messages, boolean gotHeaders) {
    }

    private final ManagedChannel channel;

    RawClient(int port) {
        channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext()
                .maxInboundMessageSize(Integer.MAX_VALUE).build();
    }

    /** Starts a call; the returned handle sends messages and gives the result. */
    Call start(String method, Map<String, String> headers) {
        MethodDescriptor<byte[], byte[]> m = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setFullMethodName("spark.connect.SparkConnectService/" + method)
                .setType(MethodDescriptor.MethodType.UNKNOWN)
                .setRequestMarshaller(RawBytes.INSTANCE).setResponseMarshaller(RawBytes.INSTANCE).build();
        ClientCall<byte[], byte[]> call = channel.newCall(m, CallOptions.DEFAULT);
        Call handle = new Call(call);
        Metadata md = new Metadata();
        headers.forEach((k, v) -> md.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata h) {
                handle.gotHeaders = true;
            }

            @Override
            public void onMessage(byte[] message) {
                handle.messages.add(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                handle.done.complete(new Result(status, List.copyOf(handle.messages), handle.gotHeaders));
            }
        }, md);
        call.request(Integer.MAX_VALUE);
        return handle;
    }

    /** A unary-style call: one message, half-close, wait (bounded) for the end. */
    Result call(String method, Map<String, String> headers, byte[] message, long waitMillis) throws Exception {
        Call c = start(method, headers);
        c.send(message);
        c.halfClose();
        return c.result(waitMillis);
    }

    static final class Call {
        private final ClientCall<byte[], byte[]> call;
        final List<byte[]> messages = new CopyOnWriteArrayList<>();
        volatile boolean gotHeaders;
        final CompletableFuture<Result> done = new CompletableFuture<>();

        Call(ClientCall<byte[], byte[]> call) {
            this.call = call;
        }

        void send(byte[] message) {
            call.sendMessage(message);
        }

        void halfClose() {
            call.halfClose();
        }

        Result result(long waitMillis) throws Exception {
            return done.get(waitMillis, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
