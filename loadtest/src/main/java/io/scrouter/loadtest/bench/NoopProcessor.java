package io.scrouter.loadtest.bench;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;

/**
 * The cheapest correct ext_proc server: answers every {@code request_headers} with an empty
 * {@code HeadersResponse}. The benchmark baseline: what gRPC, protobuf and the loopback cost by themselves.
 */
final class NoopProcessor extends ExternalProcessorGrpc.ExternalProcessorImplBase {

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
