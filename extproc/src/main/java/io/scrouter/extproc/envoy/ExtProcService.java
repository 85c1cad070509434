package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Envoy's {@code envoy.service.ext_proc.v3.ExternalProcessor}: one small {@link ProcessStream} per
 * {@code Process} stream, each numbered so log lines of one request can be found together.
 */
public final class ExtProcService extends ExternalProcessorGrpc.ExternalProcessorImplBase {

    private final Decider decider;
    private final DecisionObserver observer;
    private final StreamLimits limits;
    private final AtomicLong streams = new AtomicLong();

    public ExtProcService(Decider decider, DecisionObserver observer, StreamLimits limits) {
        this.decider = decider;
        this.observer = observer;
        this.limits = limits;
    }

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responseObserver) {
        return new ProcessStream(streams.incrementAndGet(), decider, responseObserver, observer, limits);
    }
}
