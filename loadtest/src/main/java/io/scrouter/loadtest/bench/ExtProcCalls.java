package io.scrouter.loadtest.bench;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.testing.ExtProcClient;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Calls an ext_proc server as Envoy does, without blocking a thread per call: one {@code Process} stream per
 * HTTP request, one {@code request_headers} message with {@code raw_value} headers, half-close once answered.
 * Thousands of calls can be in flight at once, which is what a busy Envoy produces.
 */
public final class ExtProcCalls {

    /** Exactly one of the two is non-null. Runs on a gRPC thread: keep it short, never block. */
    public interface Answer {
        void answered(ProcessingResponse response, Throwable error);
    }

    private final ExternalProcessorGrpc.ExternalProcessorStub stub;

    public ExtProcCalls(Channel channel) {
        this.stub = ExternalProcessorGrpc.newStub(channel);
    }

    /** Sends the headers of Spark Connect call {@code rpc} for {@code session} on a new stream. */
    public void send(String rpc, String session, Answer answer) {
        ProcessingRequest request = ExtProcClient.headersRequest(ExtProcClient.sparkCall(rpc, session));
        AtomicBoolean told = new AtomicBoolean();
        AtomicReference<StreamObserver<ProcessingRequest>> out = new AtomicReference<>();
        out.set(stub.process(new StreamObserver<>() {
            @Override
            public void onNext(ProcessingResponse r) {
                if (told.compareAndSet(false, true)) {
                    answer.answered(r, null);
                    out.get().onCompleted();
                }
            }

            @Override
            public void onError(Throwable t) {
                if (told.compareAndSet(false, true)) {
                    answer.answered(null, t);
                }
            }

            @Override
            public void onCompleted() {
                if (told.compareAndSet(false, true)) {
                    answer.answered(null, new IllegalStateException("stream closed without an answer"));
                }
            }
        }));
        out.get().onNext(request);
    }
}
