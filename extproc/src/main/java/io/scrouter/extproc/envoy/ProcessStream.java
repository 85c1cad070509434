package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Rejections;
import io.scrouter.extproc.routing.SessionRouter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One ext_proc {@code Process} stream, which Envoy opens per HTTP request.
 *
 * <p>Envoy sends the request headers and waits for exactly one answer: a header mutation naming the
 * replica, or an immediate rejection. Every path through this class answers, including an internal error
 * or a decision past its deadline, because a stream left unanswered stalls the client until Envoy's
 * message timeout. Decisions may complete on another thread, so writes to Envoy are serialised here.
 */
final class ProcessStream implements StreamObserver<ProcessingRequest> {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessStream.class);

    private final long streamId;
    private final SessionRouter router;
    private final StreamObserver<ProcessingResponse> envoy;
    private final DecisionObserver observer;
    private final long deadlineMillis;
    private boolean closed;

    ProcessStream(long streamId, SessionRouter router, StreamObserver<ProcessingResponse> envoy,
                  DecisionObserver observer, long deadlineMillis) {
        this.streamId = streamId;
        this.router = router;
        this.envoy = envoy;
        this.observer = observer;
        this.deadlineMillis = deadlineMillis;
    }

    @Override
    public void onNext(ProcessingRequest request) {
        if (request.getRequestCase() != ProcessingRequest.RequestCase.REQUEST_HEADERS) {
            // We only ask for request headers; answer anything else unchanged rather than stall Envoy.
            LOG.debug("stream={} unexpected phase {}, passing it through", streamId, request.getRequestCase());
            send(Responses.passThrough(request));
            return;
        }
        long started = System.nanoTime();
        RequestHeaders headers = RequestHeaders.read(request.getRequestHeaders().getHeaders());
        CompletableFuture<Decision> decision;
        if (headers.sessionIdCount() > 1) {
            decision = CompletableFuture.completedFuture(Rejections.repeatedSessionId(headers.sessionIdCount()));
        } else {
            try {
                decision = router.decide(headers.path(), headers.sessionId());
            } catch (RuntimeException e) {
                decision = CompletableFuture.failedFuture(e);
            }
        }
        if (!decision.isDone()) {
            decision = decision.orTimeout(deadlineMillis, TimeUnit.MILLISECONDS);
        }
        decision.whenComplete((d, error) -> answer(d, error, headers, started));
    }

    private void answer(Decision d, Throwable error, RequestHeaders headers, long started) {
        Decision decided = d;
        if (error != null) {
            boolean late = error instanceof TimeoutException || error.getCause() instanceof TimeoutException;
            if (!late) {
                LOG.error("stream={} session={} decision failed", streamId, headers.sessionId(), error);
            }
            decided = new Decision.Reject(Status.Code.UNAVAILABLE, late ? "deadline" : "internal",
                    late ? "the router could not decide within " + deadlineMillis + " ms; retry the call"
                            : "the router failed to decide (" + error.getClass().getSimpleName() + "); retry the call");
        }
        ProcessingResponse response;
        if (decided instanceof Decision.Route route) {
            response = Responses.routeOnHeaders(route.replica().grpcAddress());
        } else {
            Decision.Reject reject = (Decision.Reject) decided;
            response = Responses.reject(reject.code(), reject.reason(), reject.message());
        }
        send(response);
        observer.decided(decided, System.nanoTime() - started, headers.clientSetUpstream());
    }

    private synchronized void send(ProcessingResponse response) {
        if (closed) {
            return;
        }
        try {
            envoy.onNext(response);
        } catch (RuntimeException e) {
            // Envoy went away (stream cancelled) between request and answer: nothing to answer any more.
            LOG.debug("stream={} answer not delivered: {}", streamId, e.toString());
        }
    }

    @Override
    public void onError(Throwable t) {
        Status status = Status.fromThrowable(t);
        if (status.getCode() == Status.Code.CANCELLED) {
            LOG.debug("stream={} cancelled by Envoy", streamId);
        } else {
            LOG.debug("stream={} ended with {}", streamId, status);
        }
        synchronized (this) {
            closed = true;
        }
    }

    @Override
    public synchronized void onCompleted() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            envoy.onCompleted();
        } catch (StatusRuntimeException | IllegalStateException e) {
            LOG.debug("stream={} already closed: {}", streamId, e.toString());
        }
    }
}
