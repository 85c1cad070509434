package io.scrouter.loadtest.bench;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;

import java.net.InetSocketAddress;

/**
 * The cheapest correct ext_proc server: answers every {@code request_headers} with an empty
 * {@code HeadersResponse}. The benchmark baseline: what gRPC, protobuf and the loopback cost by themselves.
 */
final class NoopProcessor extends ExternalProcessorGrpc.ExternalProcessorImplBase {

    /**
     * Runs a no-op server in its own process, as the router runs in its own: {@code NoopProcessor <port>}. It
     * reports SERVING on the ext_proc health service as soon as it listens, and runs until killed.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].matches("\\d{1,5}")) {
            System.err.println("usage: NoopProcessor <port>");
            System.exit(2);
        }
        HealthStatusManager health = new HealthStatusManager();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])))
                .directExecutor()
                .addService(new NoopProcessor())
                .addService(health.getHealthService())
                .build().start();
        health.setStatus("envoy.service.ext_proc.v3.ExternalProcessor", HealthCheckResponse.ServingStatus.SERVING);
        server.awaitTermination();
    }

    private static final ProcessingResponse EMPTY = ProcessingResponse.newBuilder()
            .setRequestHeaders(HeadersResponse.getDefaultInstance()).build();

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(ProcessingRequest request) {
                out.onNext(EMPTY);
            }

            @Override
            public void onError(Throwable t) {
                // CANCELLED when the client goes away: normal, nothing to clean up.
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }
}
