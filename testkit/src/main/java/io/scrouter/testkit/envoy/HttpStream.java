package io.scrouter.testkit.envoy;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One downstream request through Envoy's filter chain as the shipped configs build it: early header mutation,
 * the ext_proc filter, then the router to the ORIGINAL_DST cluster. Every event of the request (client,
 * processor, upstream, timer) runs on one {@link SerialExecutor}, in order, as on an Envoy worker.
 *
 * <p>The ext_proc filter follows {@code source/extensions/filters/http/ext_proc/} of Envoy 1.34 ({@code EP/}):
 * <ul>
 *   <li>The {@code Process} stream opens with the request headers ({@code end_stream} false) and stays open
 *       until the request ends ({@code Filter::sendRequest}; {@code Filter::onDestroy}). Then Envoy ends it with
 *       END_STREAM and a reset at once ({@code Filter::closeStream}, {@code ProcessorStreamImpl::close}).</li>
 *   <li>The processor closing it with OK means "carry on without me", even with an answer pending
 *       ({@code Filter::onGrpcClose}, {@code ProcessorState::clearAsyncState}).</li>
 *   <li>Any other end, at any time before processing completed, fails the request closed: a 500 local reply
 *       (gRPC UNKNOWN), or a reset if the response has begun ({@code Filter::onGrpcError};
 *       {@code DownstreamFilterManager::sendLocalReply}).</li>
 *   <li>An answer not back within {@code message_timeout}: 504 (gRPC UNAVAILABLE) ({@code Filter::onMessageTimeout}).</li>
 *   <li>{@code mode_override} only with {@code allow_mode_override}, on the headers answer, and only if one of
 *       {@code allowed_override_modes} equals it on every field but {@code request_header_mode}
 *       ({@code Filter::onReceiveMessage}).</li>
 *   <li>{@code BUFFERED_PARTIAL}: the body is queued until more than the request's buffer limit (the HTTP/2
 *       stream window) or the end has arrived, then sent as one message; after its answer the rest passes
 *       without the processor ({@code handleDataBufferedPartialMode}, {@code sendStreamChunk},
 *       {@code ProcessorState::handleBufferedPartialBodyCallback}).</li>
 *   <li>A header mutation applies on the headers answer, and on a body answer only while the headers are still
 *       held ({@code processHeaderMutationIfAvailable}); 1.34 reads {@code raw_value} only
 *       ({@code MutationUtils::applyHeaderMutations}); refused headers are dropped ({@link MutationRules}).</li>
 * </ul>
 * Not modelled, because the shipped configs never enable them: STREAMED, BUFFERED and FULL_DUPLEX body
 * modes (an override to them continues the headers at once, without sending the body), response phases,
 * trailers, body mutations, observability mode.
 */
final class HttpStream extends ServerCall.Listener<byte[]> {

    /** Where the request is in Envoy's filter chain. */
    private enum Phase {
        /** Request headers sent to the processor; headers and any body held until the answer. */
        HEADERS_SENT,
        /** Override to BUFFERED_PARTIAL accepted: queueing body until over the limit or the end. */
        BODY_BUFFERING,
        /** The queued body sent; waiting for its answer, headers still held. */
        BODY_SENT,
        /** Headers continued to the router; body flows to the upstream. */
        CONTINUED,
        /** Envoy replied itself (rejection, error, timeout, no host); nothing more is forwarded. */
        REPLIED
    }

    /** HTTP/2's default SETTINGS_MAX_FRAME_SIZE: Envoy sees a body as DATA frames of at most this. */
    static final int FRAME_BYTES = 16 * 1024;

    private final EnvoyStandIn envoy;
    private final EnvoyModel model;
    private final ServerCall<byte[], byte[]> downstream;
    private final Metadata headers;
    private final String method;
    private final SerialExecutor events;

    private Phase phase = Phase.HEADERS_SENT;
    private ProcessingMode mode;
    private ExtProcCluster.Host sideHost;
    private ClientCall<ProcessingRequest, ProcessingResponse> side;
    private boolean sideEnded;
    /** This side closed the ext_proc stream; its end may not be reported yet. */
    private boolean sideClosedHere;
    private boolean processingComplete;
    private ScheduledFuture<?> messageTimer;
    private final List<byte[]> held = new ArrayList<>();
    private long heldBytes;
    private boolean downstreamHalfClosed;
    private boolean routedFromBody;
    private final Map<String, Struct> dynamicMetadata = new HashMap<>();
    private ClientCall<byte[], byte[]> upstream;
    private boolean responseStarted;
    private boolean finished;
    private String sessionHeader;
    /** What the record of this request will say, filled in as it goes. */
    private String upstreamAddress;
    private String routeSource;
    private Status outcome;
    private String details;
    private boolean recorded;
    private String sessionInBody;

    HttpStream(EnvoyStandIn envoy, ServerCall<byte[], byte[]> downstream, Metadata headers) {
        this.envoy = envoy;
        this.model = envoy.model();
        this.downstream = downstream;
        this.headers = headers;
        String full = downstream.getMethodDescriptor().getFullMethodName();
        this.method = full.substring(full.lastIndexOf('/') + 1);
        this.events = new SerialExecutor(envoy.pool());
        this.mode = model.processingMode();
    }

    /** Runs the request headers through the chain; returns the listener for the rest of the request. */
    HttpStream start() {
        events.execute(this::onRequestHeaders);
        return this;
    }

    // ---- client -------------------------------------------------------------------------------------------

    private void onRequestHeaders() {
        // conn_manager_utility.cc, ConnectionManagerUtility::mutateRequestHeaders: early header mutations run
        // before route selection and before any HTTP filter.
        for (String name : model.earlyRemovedHeaders()) {
            headers.removeAll(key(name));
        }
        // ConnectionManagerUtility::mutateRequestHeaders with use_remote_address: every peer is external.
        String peer = "127.0.0.1";
        headers.removeAll(key("x-envoy-internal"));
        headers.put(key("x-forwarded-for"), peer);
        headers.removeAll(key("x-forwarded-proto"));
        headers.put(key("x-forwarded-proto"), "http");
        headers.removeAll(key("x-envoy-external-address"));
        headers.put(key("x-envoy-external-address"), peer);
        headers.removeAll(key("x-request-id"));
        headers.put(key("x-request-id"), java.util.UUID.randomUUID().toString());
        sessionHeader = headers.get(key("x-spark-session-id"));
        sideHost = envoy.extProc().pick();
        if (sideHost == null) {
            // Filter::openStream: no host, so the router answers 503 inside start() and onGrpcError(14) runs at once.
            onSideEnded(Status.UNAVAILABLE.withDescription("no healthy upstream"));
            return;
        }
        sideHost.activeStreams.incrementAndGet();
        side = sideHost.channel.newCall(ExternalProcessorGrpc.getProcessMethod(), CallOptions.DEFAULT);
        side.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(ProcessingResponse message) {
                events.execute(() -> onSideMessage(message));
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                events.execute(() -> onSideEnded(status));
            }
        }, new Metadata());
        side.request(Integer.MAX_VALUE);
        sendToProcessor(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder()
                .setHeaders(envoyHeaderMap()).setEndOfStream(false)).build());
        downstream.request(1);
    }

    @Override
    public void onMessage(byte[] message) {
        events.execute(() -> onClientMessage(message));
    }

    private void onClientMessage(byte[] message) {
        switch (phase) {
            case HEADERS_SENT, BODY_SENT -> {
                // Held while the filter chain is paused; reading stops once a buffer's worth is held (watermark).
                hold(message);
                readMoreIfUnderLimit();
            }
            case BODY_BUFFERING -> {
                hold(message);
                if (heldBytes > model.streamWindowBytes()) {
                    sendBody();
                } else {
                    downstream.request(1);
                }
            }
            case CONTINUED -> {
                if (sessionInBody == null) {
                    sessionInBody = sessionIdOf(message);
                }
                upstream.sendMessage(message);
                if (upstream.isReady()) {
                    downstream.request(1);
                }
            }
            case REPLIED -> {
                // Envoy replied already; the rest of the request is discarded.
            }
        }
    }

    @Override
    public void onHalfClose() {
        events.execute(() -> {
            downstreamHalfClosed = true;
            if (phase == Phase.BODY_BUFFERING) {
                sendBody();
            } else if (phase == Phase.CONTINUED) {
                upstream.halfClose();
            }
        });
    }

    @Override
    public void onCancel() {
        events.execute(() -> {
            if (upstream != null) {
                upstream.cancel("downstream reset", null);
            }
            finish();
        });
    }

    @Override
    public void onComplete() {
        events.execute(this::finish);
    }

    private void hold(byte[] message) {
        if (sessionInBody == null && held.isEmpty()) {
            sessionInBody = sessionIdOf(message);
        }
        held.add(message);
        heldBytes += 5L + message.length;
    }

    private void readMoreIfUnderLimit() {
        if (heldBytes <= model.streamWindowBytes()) {
            downstream.request(1);
        }
    }

    // ---- processor ----------------------------------------------------------------------------------------

    private void sendToProcessor(ProcessingRequest request) {
        side.sendMessage(request);
        long timeout = model.messageTimeout().toMillis();
        messageTimer = envoy.timers().schedule(() -> events.execute(this::onMessageTimeout), timeout,
                TimeUnit.MILLISECONDS);
    }

    private void stopTimer() {
        if (messageTimer != null) {
            messageTimer.cancel(false);
            messageTimer = null;
        }
    }

    private void onSideMessage(ProcessingResponse response) {
        if (processingComplete) {
            return;
        }
        boolean awaitingHeaders = phase == Phase.HEADERS_SENT;
        boolean awaitingBody = phase == Phase.BODY_SENT;
        if (!awaitingHeaders && !awaitingBody) {
            // Filter::onReceiveMessage: an answer nobody waits for is spurious; the processor is dropped and
            // the request carries on as it is (a route on it is never applied: the headers are gone).
            spurious();
            return;
        }
        stopTimer();
        // Filter::onReceiveMessage writes dynamic metadata before it looks at the answer's type.
        applyDynamicMetadata(response);
        if (response.hasImmediateResponse()) {
            immediateResponse(response.getImmediateResponse());
            return;
        }
        if (awaitingHeaders && response.hasRequestHeaders()) {
            if (!applyCommon(response.getRequestHeaders().getResponse())) {
                return;
            }
            applyModeOverride(response);
            if (mode.getRequestBodyMode() == ProcessingMode.BodySendMode.BUFFERED_PARTIAL) {
                // processor_state.cc, handleBufferedPartialMode: what arrived meanwhile joins the queue.
                phase = Phase.BODY_BUFFERING;
                if (heldBytes > model.streamWindowBytes() || downstreamHalfClosed) {
                    sendBody();
                } else {
                    downstream.request(1);
                }
            } else {
                continueRequest();
            }
            return;
        }
        if (awaitingBody && response.hasRequestBody()) {
            // The headers are still held in BUFFERED_PARTIAL, so the body answer's header mutation applies.
            if (!applyCommon(response.getRequestBody().getResponse())) {
                return;
            }
            routedFromBody = true;
            continueRequest();
            return;
        }
        spurious();
    }

    private void spurious() {
        processingComplete = true;
        stopTimer();
        closeSide();
        if (phase == Phase.HEADERS_SENT || phase == Phase.BODY_BUFFERING || phase == Phase.BODY_SENT) {
            continueRequest();
        }
    }

    /** Filter::onGrpcClose (OK) and Filter::onGrpcError (anything else). */
    private void onSideEnded(Status status) {
        if (!sideEnded && sideHost != null) {
            sideHost.activeStreams.decrementAndGet();
        }
        sideEnded = true;
        if (processingComplete || finished) {
            return;
        }
        processingComplete = true;
        stopTimer();
        if (status.isOk() || model.failureModeAllow()) {
            // Carry on without the processor; a held request continues unmodified from here.
            if (phase != Phase.CONTINUED && phase != Phase.REPLIED) {
                continueRequest();
            }
            return;
        }
        failClosed(LocalReply.extProcError(status));
    }

    private void onMessageTimeout() {
        if (processingComplete || messageTimer == null) {
            return;
        }
        messageTimer = null;
        processingComplete = true;
        closeSide();
        if (model.failureModeAllow()) {
            continueRequest();
        } else {
            failClosed(LocalReply.messageTimeout());
        }
    }

    private void applyModeOverride(ProcessingResponse response) {
        if (!model.allowModeOverride() || !response.hasModeOverride()) {
            return;
        }
        ProcessingMode override = response.getModeOverride();
        ProcessingMode configured = model.processingMode();
        // effectiveModeOverride: DEFAULT header and trailer modes keep the configured value; body modes are taken.
        ProcessingMode effective = ProcessingMode.newBuilder()
                .setRequestHeaderMode(orConfigured(override.getRequestHeaderMode(), configured.getRequestHeaderMode()))
                .setResponseHeaderMode(orConfigured(override.getResponseHeaderMode(), configured.getResponseHeaderMode()))
                .setRequestTrailerMode(orConfigured(override.getRequestTrailerMode(), configured.getRequestTrailerMode()))
                .setResponseTrailerMode(orConfigured(override.getResponseTrailerMode(),
                        configured.getResponseTrailerMode()))
                .setRequestBodyMode(override.getRequestBodyMode())
                .setResponseBodyMode(override.getResponseBodyMode())
                .build();
        boolean allowed = model.allowedOverrideModes().isEmpty() || model.allowedOverrideModes().stream()
                .anyMatch(m -> m.getRequestBodyMode() == effective.getRequestBodyMode()
                        && m.getRequestTrailerMode() == effective.getRequestTrailerMode()
                        && m.getResponseHeaderMode() == effective.getResponseHeaderMode()
                        && m.getResponseBodyMode() == effective.getResponseBodyMode()
                        && m.getResponseTrailerMode() == effective.getResponseTrailerMode());
        if (allowed) {
            mode = effective;
        }
    }

    private static ProcessingMode.HeaderSendMode orConfigured(ProcessingMode.HeaderSendMode override,
                                                              ProcessingMode.HeaderSendMode configured) {
        return override == ProcessingMode.HeaderSendMode.DEFAULT ? configured : override;
    }

    private void sendBody() {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (byte[] m : held) {
            all.writeBytes(ByteBuffer.allocate(5).put((byte) 0).putInt(m.length).array());
            all.writeBytes(m);
        }
        byte[] bytes = all.toByteArray();
        int limit = model.streamWindowBytes();
        // The queue is checked after each DATA frame, so Envoy sends the first frame that crosses the limit too.
        int send = bytes.length > limit ? Math.min(bytes.length, (limit / FRAME_BYTES + 1) * FRAME_BYTES) : bytes.length;
        boolean endOfStream = downstreamHalfClosed && send == bytes.length;
        phase = Phase.BODY_SENT;
        sendToProcessor(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
                .setBody(ByteString.copyFrom(bytes, 0, send)).setEndOfStream(endOfStream)).build());
    }

    /** Applies a header mutation; false when Envoy had to reply instead (an invalid value). */
    private boolean applyCommon(CommonResponse common) {
        for (HeaderValueOption option : common.getHeaderMutation().getSetHeadersList()) {
            HeaderValue h = option.getHeader();
            if (!MutationRules.maySet(h.getKey())) {
                envoy.noteRejectedMutation();
                continue;
            }
            // MutationUtils::applyHeaderMutations reads raw_value only.
            byte[] value = h.getRawValue().toByteArray();
            if (!MutationRules.isValidValue(value)) {
                failClosed(LocalReply.of(500, "", "ext_proc_error_Invalid_attempt_to_modify_" + h.getKey()));
                return false;
            }
            Metadata.Key<String> k = key(h.getKey());
            if (!option.getAppend().getValue()) {
                headers.removeAll(k);
            }
            headers.put(k, new String(value, StandardCharsets.ISO_8859_1));
        }
        for (String name : common.getHeaderMutation().getRemoveHeadersList()) {
            if (MutationRules.mayRemove(name)) {
                headers.removeAll(key(name));
            } else {
                envoy.noteRejectedMutation();
            }
        }
        return true;
    }

    private void applyDynamicMetadata(ProcessingResponse response) {
        for (Map.Entry<String, Value> ns : response.getDynamicMetadata().getFieldsMap().entrySet()) {
            // Filter::setDynamicMetadata: only listed namespaces (none when unset), merged key by key.
            if (model.receivingNamespaces().contains(ns.getKey())) {
                dynamicMetadata.merge(ns.getKey(), ns.getValue().getStructValue(),
                        (a, b) -> a.toBuilder().putAllFields(b.getFieldsMap()).build());
            }
        }
    }

    private void immediateResponse(ImmediateResponse immediate) {
        processingComplete = true;
        closeSide();
        Status status = immediate.hasGrpcStatus()
                ? Status.fromCodeValue(immediate.getGrpcStatus().getStatus())
                : Status.fromCode(LocalReply.grpcStatusOf(immediate.getStatus().getCodeValue() < 200 ? 200
                        : immediate.getStatus().getCodeValue()));
        String body = immediate.getBody().toStringUtf8();
        reply(new LocalReply(immediate.getStatus().getCodeValue(), body.isEmpty() ? status
                : status.withDescription(body), immediate.getDetails()));
    }

    /**
     * Ends the side stream as Envoy does: END_STREAM, then an immediate reset; once only, however many paths
     * end it before its close is reported (common/ext_proc/grpc_client_impl.h, ProcessorStreamImpl::close acts
     * only if the stream is not closed yet).
     */
    private void closeSide() {
        if (side != null && !sideEnded && !sideClosedHere) {
            sideClosedHere = true;
            side.halfClose();
            side.cancel("ext_proc stream closed by Envoy", null);
        }
    }

    // ---- router -------------------------------------------------------------------------------------------

    private void continueRequest() {
        phase = Phase.CONTINUED;
        String headerValue = model.routeHeader().map(h -> headers.get(key(h))).orElse(null);
        Optional<OriginalDst.Choice> choice = OriginalDst.choose(model, dynamicMetadata, headerValue);
        if (choice.isEmpty()) {
            reply(LocalReply.noHealthyUpstream());
            return;
        }
        upstreamAddress = choice.get().address().getAddress().getHostAddress() + ":" + choice.get().address().getPort();
        routeSource = choice.get().source();
        upstream = envoy.upstreamChannel(choice.get().address()).newCall(downstream.getMethodDescriptor(),
                CallOptions.DEFAULT);
        upstream.start(new ClientCall.Listener<>() {
            @Override
            public void onHeaders(Metadata responseHeaders) {
                events.execute(() -> {
                    responseStarted = true;
                    downstream.sendHeaders(responseHeaders);
                });
            }

            @Override
            public void onMessage(byte[] message) {
                events.execute(() -> downstream.sendMessage(message));
            }

            @Override
            public void onReady() {
                events.execute(() -> {
                    if (phase == Phase.CONTINUED && !downstreamHalfClosed && upstream.isReady()) {
                        downstream.request(1);
                    }
                });
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                events.execute(() -> onUpstreamClosed(status, trailers));
            }
        }, headers);
        upstream.request(Integer.MAX_VALUE);
        for (byte[] m : held) {
            upstream.sendMessage(m);
        }
        held.clear();
        heldBytes = 0;
        if (downstreamHalfClosed) {
            upstream.halfClose();
        } else {
            downstream.request(1);
        }
    }

    private void onUpstreamClosed(Status status, Metadata trailers) {
        if (phase == Phase.REPLIED || finished) {
            return;
        }
        if (!responseStarted && status.getCode() == Status.Code.UNAVAILABLE && status.getCause() != null) {
            // router.cc, Filter::onUpstreamReset: no connection to the upstream host, 503 before any response
            // headers, and no retry without a retry_policy.
            LocalReply refused = LocalReply.of(503, "upstream connect error or disconnect/reset before headers. "
                    + "reset reason: remote connection failure, transport failure reason: delayed connect error: "
                    + "Connection refused", "upstream_reset_before_response_started{remote_connection_failure}");
            details = refused.details();
            closeDownstream(refused.status(), new Metadata());
        } else {
            closeDownstream(status, trailers);
        }
        finish();
    }

    private String sideHostName() {
        return sideHost == null ? null : sideHost.address.getAddress().getHostAddress() + ":" + sideHost.address.getPort();
    }

    // ---- replies and the end of the request ---------------------------------------------------------------

    /**
     * DownstreamFilterManager::sendLocalReply: before the response began, a trailers-only reply; after, a
     * reset of the downstream stream (as grpc-java reports RST_STREAM with NO_ERROR to a client: UNAVAILABLE).
     */
    private void failClosed(LocalReply reply) {
        if (responseStarted) {
            if (upstream != null) {
                upstream.cancel("downstream reset by Envoy", null);
            }
            details = reply.details();
            phase = Phase.REPLIED;
            closeDownstream(Status.UNAVAILABLE.withDescription("RST_STREAM closed stream. HTTP/2 error code: NO_ERROR"),
                    new Metadata());
            finish();
            return;
        }
        reply(reply);
    }

    private void reply(LocalReply reply) {
        if (upstream != null) {
            upstream.cancel("local reply", null);
        }
        details = reply.details();
        phase = Phase.REPLIED;
        closeDownstream(reply.status(), new Metadata());
        finish();
    }

    private void closeDownstream(Status status, Metadata trailers) {
        if (outcome == null) {
            outcome = status;
        }
        // Recorded before the client can see the end, so a test that got its answer finds the record.
        record();
        try {
            downstream.close(status, trailers);
        } catch (IllegalStateException alreadyClosed) {
            // The client went away first.
        }
    }

    /** Filter::onDestroy: the request is over, so the side stream goes too. */
    private void finish() {
        if (finished) {
            return;
        }
        finished = true;
        stopTimer();
        closeSide();
        if (outcome == null) {
            outcome = Status.CANCELLED.withDescription("the client went away");
        }
        record();
    }

    private void record() {
        if (recorded) {
            return;
        }
        recorded = true;
        envoy.record(new RecordedCall(method, sessionHeader, sessionInBody, routedFromBody, upstreamAddress,
                routeSource, outcome.getCode(), outcome.getDescription(), details, sideHostName()));
    }

    /** Field 1 of a Spark Connect request message (every one starts with session_id), for the record. */
    private static String sessionIdOf(byte[] message) {
        if (message.length > 2 && message[0] == 0x0A && message[1] > 0 && message[1] + 2 <= message.length) {
            return new String(message, 2, message[1], StandardCharsets.UTF_8);
        }
        return null;
    }

    /** The request headers as Envoy sends them: pseudo-headers first, values in {@code raw_value} only. */
    private HeaderMap envoyHeaderMap() {
        HeaderMap.Builder map = HeaderMap.newBuilder();
        add(map, ":method", "POST");
        add(map, ":scheme", "http");
        add(map, ":authority", downstream.getAuthority() == null ? "localhost" : downstream.getAuthority());
        add(map, ":path", "/" + downstream.getMethodDescriptor().getFullMethodName());
        add(map, "content-type", "application/grpc");
        add(map, "te", "trailers");
        for (String name : headers.keys()) {
            if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                for (byte[] v : headers.getAll(Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER))) {
                    add(map, name, java.util.Base64.getEncoder().withoutPadding().encodeToString(v));
                }
            } else {
                for (String v : headers.getAll(key(name))) {
                    add(map, name, v);
                }
            }
        }
        return map.build();
    }

    private static void add(HeaderMap.Builder map, String name, String value) {
        map.addHeaders(HeaderValue.newBuilder().setKey(name)
                .setRawValue(ByteString.copyFrom(value, StandardCharsets.ISO_8859_1)));
    }

    static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }
}
