package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Rejections;
import io.scrouter.extproc.routing.Request;
import io.scrouter.extproc.runtime.TimeSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * One ext_proc {@code Process} stream, which Envoy opens per HTTP request.
 *
 * <p>Header mode (the default, and every request that carries {@code x-spark-session-id}): Envoy sends the
 * request headers and waits for exactly one answer, a header mutation naming the replica or an immediate
 * rejection.
 *
 * <p>Body mode (a Spark Connect request without the header): the headers are answered with no route and a
 * {@code mode_override} asking for the body; the session id is read from the start of the body and the route
 * goes on the answer to the body message that completed it. Answers to body messages are owed one per
 * message, in order, so messages that arrive before the decision is made are answered after it (the first
 * one carries the route).
 *
 * <p><b>The stream ends with OK right after the final answer.</b> Envoy keeps a request's stream open until the
 * HTTP request ends, and if the stream then ends with an error (this router stopping, a connection reset) it
 * fails the request with a 500, or resets it if the response has started ({@code ext_proc.cc},
 * {@code Filter::onGrpcError}). A stream the server closes with OK means "continue without the processor"
 * ({@code Filter::onGrpcClose}). Closing at once therefore ties a long Spark query to this router only for the
 * milliseconds of the decision, so restarting the router fails nothing that is already running.
 *
 * <p>Every path answers, including an internal error or a decision past its deadline, because a stream left
 * unanswered stalls the client until Envoy's message timeout. Decisions may complete on another thread, so
 * the stream's state and writes to Envoy are guarded by this object's lock.
 */
final class ProcessStream implements StreamObserver<ProcessingRequest> {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessStream.class);

    private enum Phase {
        /** Waiting for the request headers. */
        HEADERS,
        /** Asked for the body; collecting the session id from it. */
        BODY,
        /** A decision is being made; answers to body messages are held until it is. */
        DECIDING,
        /** The request is routed or rejected and the stream closed; anything further is ignored. */
        ANSWERED
    }

    private final long streamId;
    private final Decider decider;
    private final StreamObserver<ProcessingResponse> envoy;
    private final DecisionObserver observer;
    private final StreamLimits limits;
    private final TimeSource time;
    private Phase phase = Phase.HEADERS;
    private RequestHeaders headers;
    private SessionIdInBody bodyReader;
    /** The id the decision was asked for (from the header or the body), for the DEBUG decision line. */
    private String decidedSession;
    /** Body messages received and not answered yet. */
    private int owedBodyAnswers;
    private boolean closed;

    ProcessStream(long streamId, Decider decider, StreamObserver<ProcessingResponse> envoy,
                  DecisionObserver observer, StreamLimits limits, TimeSource time) {
        this.time = time;
        this.streamId = streamId;
        this.decider = decider;
        this.envoy = envoy;
        this.observer = observer;
        this.limits = limits;
    }

    @Override
    public synchronized void onNext(ProcessingRequest request) {
        if (phase == Phase.ANSWERED) {
            // Sent before Envoy saw our close; it continues without us.
            return;
        }
        switch (request.getRequestCase()) {
            case REQUEST_HEADERS -> onHeaders(request.getRequestHeaders());
            case REQUEST_BODY -> onBody(request.getRequestBody());
            default -> {
                // Never asked for; answer unchanged rather than stall Envoy.
                LOG.debug("stream={} unexpected phase {}, passing it through", streamId, request.getRequestCase());
                send(Responses.passThrough(request));
            }
        }
    }

    private void onHeaders(HttpHeaders message) {
        if (phase != Phase.HEADERS) {
            LOG.debug("stream={} request headers again in phase {}, passing them through", streamId, phase);
            send(Responses.passThrough(ProcessingRequest.newBuilder().setRequestHeaders(message).build()));
            return;
        }
        long started = time.nanoTime();
        headers = RequestHeaders.read(message.getHeaders());
        if (headers.sessionIdCount() > 1) {
            decide(CompletableFuture.completedFuture(Rejections.repeatedSessionId(headers.sessionIdCount())),
                    false, started);
        } else if (headers.sessionIdOnlyInBody()) {
            if (message.getEndOfStream()) {
                // No body will come: nothing to read the id from.
                decide(CompletableFuture.completedFuture(Rejections.missingSessionId()), false, started);
                return;
            }
            phase = Phase.BODY;
            bodyReader = new SessionIdInBody();
            LOG.debug("stream={} no {} header: asking for the body", streamId, RouteHeaders.SESSION_ID);
            send(Responses.askForBody());
        } else {
            decide(decision(headers.sessionId()), false, started);
        }
    }

    private void onBody(HttpBody body) {
        switch (phase) {
            case BODY -> {
                owedBodyAnswers++;
                long started = time.nanoTime();
                if (body.getBody().size() > limits.maxBodyMessageBytes()) {
                    decide(CompletableFuture.completedFuture(Rejections.bodyTooLarge(body.getBody().size(),
                            limits.maxBodyMessageBytes())), true, started);
                    return;
                }
                SessionIdInBody.Outcome outcome = bodyReader.append(body.getBody(), body.getEndOfStream());
                if (outcome instanceof SessionIdInBody.Found found) {
                    decide(decision(found.sessionId()), true, started);
                } else if (outcome instanceof SessionIdInBody.Invalid invalid) {
                    decide(CompletableFuture.completedFuture(invalid.rejection()), true, started);
                }
                // NeedMore: the answer is owed until the id is complete.
            }
            case DECIDING -> owedBodyAnswers++;
            case HEADERS -> {
                LOG.debug("stream={} body before headers, passing it through", streamId);
                send(Responses.bodyUnchanged());
            }
            case ANSWERED -> {
                // onNext drops these; kept for the switch to be exhaustive.
            }
        }
    }

    private CompletableFuture<Decision> decision(String sessionId) {
        decidedSession = sessionId;
        try {
            return decider.decide(new Request(headers.path(), sessionId, headers.group(), headers.groupCount()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void decide(CompletableFuture<Decision> decision, boolean onBody, long started) {
        phase = Phase.DECIDING;
        time.within(decision, limits.decisionDeadlineMillis()).whenComplete((d, error) -> answer(d, error, onBody, started));
    }

    private synchronized void answer(Decision d, Throwable error, boolean onBody, long started) {
        Decision decided = d;
        if (error != null) {
            boolean late = error instanceof TimeoutException || error.getCause() instanceof TimeoutException;
            if (!late) {
                LOG.atError().setMessage("decision failed").addKeyValue("stream", streamId)
                        .addKeyValue("session", headers.sessionId()).setCause(error).log();
            }
            decided = new Decision.Reject(Status.Code.UNAVAILABLE, late ? "deadline" : "internal",
                    late ? "the router could not decide within " + limits.decisionDeadlineMillis() + " ms; retry the call"
                            : "the router failed to decide (" + error.getClass().getSimpleName() + "); retry the call");
        }
        if (decided instanceof Decision.Route route) {
            String address = route.replica().grpcAddress();
            if (onBody) {
                send(Responses.routeOnBody(address));
                for (int i = 1; i < owedBodyAnswers; i++) {
                    send(Responses.bodyUnchanged());
                }
            } else {
                send(Responses.routeOnHeaders(address));
            }
        } else {
            // Envoy ends processing on an immediate response: owed body answers are not expected any more.
            Decision.Reject reject = (Decision.Reject) decided;
            send(Responses.reject(reject.code(), reject.reason(), reject.message()));
        }
        owedBodyAnswers = 0;
        phase = Phase.ANSWERED;
        finish();
        observer.decided(decided, time.nanoTime() - started, headers.clientSetUpstream());
        if (LOG.isDebugEnabled()) {
            logDecision(decided);
        }
    }

    /** One DEBUG line per answer, its fields flat for log pipelines (SCROUTER_LOG_FORMAT=json). */
    private void logDecision(Decision decided) {
        var event = LOG.atDebug().setMessage("decided").addKeyValue("stream", streamId);
        if (decided instanceof Decision.Route route) {
            // Only a routed request's id is known to be a valid UUID; a rejected one is never echoed.
            event = event.addKeyValue("session", decidedSession)
                    .addKeyValue("outcome", route.outcome().name().toLowerCase(Locale.ROOT))
                    .addKeyValue("replica", route.replica().id());
        } else {
            event = event.addKeyValue("outcome", "rejected")
                    .addKeyValue("reason", ((Decision.Reject) decided).reason());
        }
        event.log();
    }

    private void send(ProcessingResponse response) {
        if (closed) {
            return;
        }
        try {
            envoy.onNext(response);
        } catch (StatusRuntimeException e) {
            undelivered("answer not delivered", e);
        }
    }

    /** Ends the stream with OK: Envoy continues the request without this router (see the class comment). */
    private void finish() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            envoy.onCompleted();
        } catch (StatusRuntimeException e) {
            undelivered("close not delivered", e);
        }
    }

    /** Envoy cancelling between request and answer is routine; anything else is worth a WARN. */
    private void undelivered(String what, StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.CANCELLED) {
            LOG.debug("stream={} {}: cancelled by Envoy", streamId, what);
        } else {
            LOG.atWarn().setMessage(what).addKeyValue("stream", streamId).addKeyValue("status", e.getStatus()).log();
        }
    }

    /** Envoy cancelled the stream (its request ended, or the client went away): nothing is owed any more. */
    synchronized void cancelled() {
        closed = true;
        phase = Phase.ANSWERED;
    }

    @Override
    public void onError(Throwable t) {
        Status status = Status.fromThrowable(t);
        if (status.getCode() == Status.Code.CANCELLED) {
            // Envoy ends the stream when its request ends, also before an answer (the client went away).
            LOG.debug("stream={} cancelled by Envoy", streamId);
        } else {
            LOG.warn("stream={} ended with {} before it was answered", streamId, status);
        }
        synchronized (this) {
            closed = true;
        }
    }

    @Override
    public synchronized void onCompleted() {
        // Envoy half-closed: nothing more will come. A decision under way still answers, then closes.
        if (phase != Phase.DECIDING) {
            finish();
        }
    }
}
