package io.scrouter.extproc.client;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.envoy.RouteHeaders;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client of the router's ext_proc service that sends what Envoy sends: one {@code Process} stream per request,
 * request headers with values in {@code raw_value} only, body messages when asked for. The {@code check}
 * command, the load tools and the tests all use it. It drives the router's decisions directly; the data path
 * around it (Envoy's stream lifetime, the route to a replica) is the Envoy stand-in's job in the tests.
 */
public final class ExtProcClient {

    /**
     * Spark's JVM client waits 50 ms before its first retry of an UNAVAILABLE call ({@code RetryPolicy.defaultPolicy}
     * in Spark Connect's {@code RetryPolicy.scala}: {@code initialBackoff = 50 ms}, growing 4 times per retry; kept
     * flat here, as the retries only span a store blip).
     */
    private static final long RETRY_PAUSE_MILLIS = 50;

    private final ExternalProcessorGrpc.ExternalProcessorStub stub;
    private final Duration answerWithin;

    /**
     * @param answerWithin how long the blocking calls wait for the router's answers (the asynchronous ones do not
     *                     wait: their caller puts its own bound on them)
     */
    public ExtProcClient(Channel channel, Duration answerWithin) {
        this.stub = ExternalProcessorGrpc.newStub(channel);
        this.answerWithin = answerWithin;
    }

    /** Headers of a Spark Connect call for {@code method} with the session header set (none when null). */
    public static List<String[]> sparkCall(String method, String sessionId) {
        List<String[]> h = new ArrayList<>();
        h.add(new String[] {":method", "POST"});
        h.add(new String[] {":scheme", "http"});
        h.add(new String[] {":authority", "spark.example:8080"});
        h.add(new String[] {":path", "/spark.connect.SparkConnectService/" + method});
        h.add(new String[] {"content-type", "application/grpc"});
        h.add(new String[] {"te", "trailers"});
        if (sessionId != null) {
            h.add(new String[] {RouteHeaders.SESSION_ID, sessionId});
        }
        return h;
    }

    /** The {@code request_headers} message Envoy sends for these headers, more of the request to follow. */
    public static ProcessingRequest headersRequest(List<String[]> headers) {
        HeaderMap.Builder map = HeaderMap.newBuilder();
        for (String[] kv : headers) {
            map.addHeaders(HeaderValue.newBuilder().setKey(kv[0])
                    .setRawValue(ByteString.copyFrom(kv[1], StandardCharsets.ISO_8859_1)));
        }
        return ProcessingRequest.newBuilder()
                .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(map).setEndOfStream(false))
                .build();
    }

    /** A {@code request_body} message carrying {@code body}. */
    public static ProcessingRequest bodyRequest(ByteString body, boolean endOfStream) {
        return ProcessingRequest.newBuilder()
                .setRequestBody(HttpBody.newBuilder().setBody(body).setEndOfStream(endOfStream)).build();
    }

    /** Sends one request's headers on a new stream and returns the single answer. */
    public ProcessingResponse send(List<String[]> headers) throws Exception {
        return exchange(List.of(headersRequest(headers))).get(0);
    }

    /** Sends headers that end the request (no body follows, as for a bodiless call) and returns the answer. */
    public ProcessingResponse sendEndOfStream(List<String[]> headers) throws Exception {
        ProcessingRequest.Builder r = headersRequest(headers).toBuilder();
        r.getRequestHeadersBuilder().setEndOfStream(true);
        return exchange(List.of(r.build())).get(0);
    }

    /**
     * Sends one request's headers as Spark's client sends a call: a {@code UNAVAILABLE} answer (the router's
     * "retry", for a store blip) is retried until {@code within} has passed; any other answer is returned.
     */
    public ProcessingResponse sendRetryingUnavailable(List<String[]> headers, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            ProcessingResponse r = send(headers);
            if (rejectionCode(r) != Status.Code.UNAVAILABLE.value() || System.nanoTime() - deadline > 0) {
                return r;
            }
            Thread.sleep(RETRY_PAUSE_MILLIS);
        }
    }

    /**
     * Sends one request's headers without waiting: the answer completes the future on a gRPC thread (keep what
     * follows short). Thousands can be in flight at once, which is what a busy Envoy produces.
     */
    public CompletableFuture<ProcessingResponse> sendAsync(List<String[]> headers) {
        CompletableFuture<ProcessingResponse> answer = new CompletableFuture<>();
        stream(List.of(headersRequest(headers)), 1).whenComplete((answers, error) -> {
            if (error != null) {
                answer.completeExceptionally(error);
            } else if (answers.isEmpty()) {
                answer.completeExceptionally(Status.INTERNAL.withDescription("the router closed the stream without "
                        + "answering").asRuntimeException());
            } else {
                answer.complete(answers.get(0));
            }
        });
        return answer;
    }

    /** Sends the given messages on one stream; returns the answers, one per message unless the router closed first. */
    public List<ProcessingResponse> exchange(List<ProcessingRequest> requests) throws Exception {
        return stream(requests, requests.size()).get(answerWithin.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Sends the given messages and half-closes, then returns every answer until the router ends the stream. */
    public List<ProcessingResponse> exchangeUntilClosed(List<ProcessingRequest> requests) throws Exception {
        return exchangeUntilClosedAsync(requests).get(answerWithin.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** {@link #exchangeUntilClosed} without waiting: the caller bounds it. */
    public CompletableFuture<List<ProcessingResponse>> exchangeUntilClosedAsync(List<ProcessingRequest> requests) {
        return stream(requests, Integer.MAX_VALUE);
    }

    /**
     * One {@code Process} stream: sends {@code requests}, and completes with the answers once {@code wanted} have
     * come or the router closed the stream, whichever is first; then half-closes. Fails if the stream fails.
     */
    private CompletableFuture<List<ProcessingResponse>> stream(List<ProcessingRequest> requests, int wanted) {
        List<ProcessingResponse> answers = new ArrayList<>();
        CompletableFuture<List<ProcessingResponse>> done = new CompletableFuture<>();
        StreamObserver<ProcessingRequest> out = stub.process(new StreamObserver<>() {
            @Override
            public void onNext(ProcessingResponse r) {
                synchronized (answers) {
                    answers.add(r);
                    if (answers.size() == wanted) {
                        done.complete(List.copyOf(answers));
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                synchronized (answers) {
                    done.complete(List.copyOf(answers));
                }
            }
        });
        for (ProcessingRequest r : requests) {
            out.onNext(r);
        }
        if (wanted == Integer.MAX_VALUE) {
            out.onCompleted();
        } else {
            done.whenComplete((answered, error) -> {
                if (error == null) {
                    out.onCompleted();
                }
            });
        }
        return done;
    }

    /** The {@code ip:port} the answer routes to, or null if it does not set the route header. */
    public static String upstreamOf(ProcessingResponse r) {
        if (!r.hasRequestHeaders()) {
            return null;
        }
        for (var opt : r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
            if (opt.getHeader().getKey().equals(RouteHeaders.UPSTREAM)) {
                return opt.getHeader().getRawValue().toString(StandardCharsets.US_ASCII);
            }
        }
        return null;
    }

    /** The gRPC status code of an immediate rejection, or -1 if the answer is not one. */
    public static int rejectionCode(ProcessingResponse r) {
        return r.hasImmediateResponse() ? r.getImmediateResponse().getGrpcStatus().getStatus() : -1;
    }

    /** The message of an immediate rejection, for the user. */
    public static String rejectionMessage(ProcessingResponse r) {
        return r.getImmediateResponse().getBody().toString(StandardCharsets.UTF_8);
    }
}
