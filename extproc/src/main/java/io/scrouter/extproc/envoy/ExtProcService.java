package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.runtime.TimeSource;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Envoy's {@code envoy.service.ext_proc.v3.ExternalProcessor}: one small {@link ProcessStream} per
 * {@code Process} stream, each numbered so log lines of one request can be found together.
 */
public final class ExtProcService extends ExternalProcessorGrpc.ExternalProcessorImplBase {

    private final Decider decider;
    private final DecisionObserver observer;
    private final StreamLimits limits;
    private final TimeSource time;
    private final AtomicLong streams = new AtomicLong();

    public ExtProcService(Decider decider, DecisionObserver observer, StreamLimits limits, TimeSource time) {
        this.decider = decider;
        this.observer = observer;
        this.limits = limits;
        this.time = time;
    }

    @Override
    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> responseObserver) {
        ProcessStream stream = new ProcessStream(streams.incrementAndGet(), decider, responseObserver, observer,
                limits, time);
        // As grpc-java recommends: with a cancel handler, writes after a cancellation are dropped instead of
        // throwing, and the stream learns at once that nothing is owed any more.
        if (responseObserver instanceof ServerCallStreamObserver<ProcessingResponse> call) {
            call.setOnCancelHandler(stream::cancelled);
        }
        return stream;
    }
}
