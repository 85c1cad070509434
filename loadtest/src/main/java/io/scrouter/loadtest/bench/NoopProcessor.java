package io.scrouter.loadtest.bench;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.runtime.IoLoops;
import java.net.InetSocketAddress;

/**
 * The cheapest ext_proc server that routes: answers every {@code request_headers} with one fixed route header, the
 * router's header ({@link RouteHeaders#UPSTREAM}, overwritten, in {@code raw_value}) set to one fixed address, built
 * once. The benchmark baseline: what gRPC, protobuf and the loopback cost to answer with a route at all, without
 * choosing it. The router's answer also carries the address as dynamic metadata (for the {@code metadata_key}
 * variant of the Envoy configuration); that part is the router's own cost and is measured as such.
 */
final class NoopProcessor extends ExternalProcessorGrpc.ExternalProcessorImplBase {

    /**
     * Runs a no-op server in its own process, as the router runs in its own: {@code NoopProcessor <port>}. It
     * reports SERVING on the ext_proc health service as soon as it listens, and runs until killed.
     *
     * <p>It serves on the router's own network threads ({@link IoLoops}: the JDK's NIO transport, one event loop
     * per CPU, the answer written on the loop that read the request), so that the two differ only in what they
     * answer. Left to itself, grpc-netty picks Netty's native epoll transport whenever that library is on the class
     * path, which the router does not ship; a stale copy of it in the tools' class path once gave the baseline a
     * transport of its own.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].matches("\\d{1,5}")) {
            System.err.println("usage: NoopProcessor <port>");
            System.exit(2);
        }
        HealthStatusManager health = new HealthStatusManager();
        Server server = IoLoops.perProcessor()
                .serverBuilder(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])))
                .addService(new NoopProcessor())
                .addService(health.getHealthService())
                .build().start();
        health.setStatus("envoy.service.ext_proc.v3.ExternalProcessor", HealthCheckResponse.ServingStatus.SERVING);
        server.awaitTermination();
    }

    /** One address of the kind the router answers with ({@code ip:port}); nothing listens there. */
    static final String FIXED_ROUTE = "127.0.0.1:15002";

    static final ProcessingResponse ROUTE = ProcessingResponse.newBuilder()
            .setRequestHeaders(HeadersResponse.newBuilder().setResponse(CommonResponse.newBuilder()
                    .setHeaderMutation(HeaderMutation.newBuilder().addSetHeaders(HeaderValueOption.newBuilder()
                            .setHeader(HeaderValue.newBuilder().setKey(RouteHeaders.UPSTREAM)
                                    .setRawValue(ByteString.copyFromUtf8(FIXED_ROUTE)))
                            .setAppendAction(HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD)))))
            .build();

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(ProcessingRequest request) {
                out.onNext(ROUTE);
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
