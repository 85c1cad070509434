package io.scrouter.testkit.envoy;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * An ext_proc server whose every stream follows a script the test gives, and which records what Envoy sent
 * and how each stream ended: a hand-written processor, so each stand-in behaviour can be provoked on purpose.
 */
final class ScriptedProcessor implements AutoCloseable {

    /** What the processor does with each message of a stream. */
    interface Script {
        void onMessage(ProcessingRequest request, Stream stream);
    }

    /** One {@code Process} stream as the processor saw it. */
    static final class Stream {
        final List<ProcessingRequest> received = new CopyOnWriteArrayList<>();
        final CountDownLatch ended = new CountDownLatch(1);
        volatile boolean halfClosedByEnvoy;
        volatile boolean cancelledByEnvoy;
        private final ServerCallStreamObserver<ProcessingResponse> out;

        Stream(ServerCallStreamObserver<ProcessingResponse> out) {
            this.out = out;
        }

        void answer(ProcessingResponse response) {
            out.onNext(response);
        }

        void closeOk() {
            out.onCompleted();
        }

        void fail(Status status) {
            out.onError(status.asRuntimeException());
        }

        boolean isEnded() {
            return ended.getCount() == 0;
        }
    }

    private final Server server;
    private final HealthStatusManager health = new HealthStatusManager();
    private volatile Script script;
    final List<Stream> streams = new CopyOnWriteArrayList<>();

    ScriptedProcessor(Script script) throws IOException {
        this.script = script;
        health.setStatus("envoy.service.ext_proc.v3.ExternalProcessor", HealthCheckResponse.ServingStatus.SERVING);
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .maxInboundMessageSize(64 << 20)
                .addService(new ExternalProcessorGrpc.ExternalProcessorImplBase() {
                    @Override
                    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responses) {
                        ServerCallStreamObserver<ProcessingResponse> out =
                                (ServerCallStreamObserver<ProcessingResponse>) responses;
                        Stream stream = new Stream(out);
                        streams.add(stream);
                        out.setOnCancelHandler(() -> {
                            stream.cancelledByEnvoy = true;
                            stream.ended.countDown();
                        });
                        return new StreamObserver<>() {
                            @Override
                            public void onNext(ProcessingRequest value) {
                                stream.received.add(value);
                                ScriptedProcessor.this.script.onMessage(value, stream);
                            }

                            @Override
                            public void onError(Throwable t) {
                                stream.ended.countDown();
                            }

                            @Override
                            public void onCompleted() {
                                stream.halfClosedByEnvoy = true;
                            }
                        };
                    }
                })
                .addService(health.getHealthService())
                .build().start();
    }

    InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getPort());
    }

    void script(Script next) {
        this.script = next;
    }

    void serving(boolean serving) {
        health.setStatus("envoy.service.ext_proc.v3.ExternalProcessor", serving
                ? HealthCheckResponse.ServingStatus.SERVING : HealthCheckResponse.ServingStatus.NOT_SERVING);
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    // ---- answers ------------------------------------------------------------------------------------------

    static HeaderMutation set(String name, String value) {
        return HeaderMutation.newBuilder().addSetHeaders(HeaderValueOption.newBuilder().setHeader(HeaderValue
                .newBuilder().setKey(name).setRawValue(ByteString.copyFrom(value, StandardCharsets.US_ASCII))))
                .build();
    }

    static ProcessingResponse headersAnswer(HeaderMutation mutation) {
        return ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.newBuilder()
                .setResponse(CommonResponse.newBuilder().setHeaderMutation(mutation))).build();
    }

    static ProcessingResponse route(String header, String address) {
        return headersAnswer(set(header, address));
    }

    static ProcessingResponse unchanged() {
        return ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.getDefaultInstance()).build();
    }

    static ProcessingResponse askForBody(ProcessingMode mode) {
        return ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.getDefaultInstance())
                .setModeOverride(mode).build();
    }

    static ProcessingResponse routeOnBody(String header, String address) {
        return ProcessingResponse.newBuilder().setRequestBody(BodyResponse.newBuilder()
                .setResponse(CommonResponse.newBuilder().setHeaderMutation(set(header, address)))).build();
    }

    static ProcessingResponse metadata(String namespace, String key, String value) {
        return ProcessingResponse.newBuilder().setRequestHeaders(HeadersResponse.getDefaultInstance())
                .setDynamicMetadata(Struct.newBuilder().putFields(namespace, Value.newBuilder().setStructValue(
                        Struct.newBuilder().putFields(key, Value.newBuilder().setStringValue(value).build()))
                        .build())).build();
    }
}
