/**
 * Envoy's side of the service: the ext_proc {@code Process} stream, the headers it reads and the answers it
 * gives.
 *
 * <h2>Sessions without the header: why {@code BUFFERED_PARTIAL}</h2>
 *
 * <p>Header-only processing stays the default (the shipped configs set {@code request_body_mode: NONE}).
 * Only a Spark Connect request without {@code x-spark-session-id} is answered with a {@code mode_override}
 * asking for the request body ({@link io.scrouter.extproc.envoy.Responses#BODY_MODE}); the session id is
 * then read from the first 43 bytes of the body (gRPC frame header, then {@code session_id}, field 1, which
 * every Spark Connect request message writes first) and the route header is set on the body answer. What
 * that needs from Envoy, read in its source ({@code source/extensions/filters/http/ext_proc/}):
 * <ul>
 *   <li>{@code ext_proc.cc}, {@code Filter::onReceiveMessage}: a response's {@code mode_override} is applied
 *       only when {@code allow_mode_override} is set and the filter is waiting for a header response, and it
 *       replaces the decoding <em>and</em> encoding modes ({@code setProcessingMode}), so the override must
 *       repeat {@code response_header_mode: SKIP} or Envoy starts sending response headers.</li>
 *   <li>{@code processor_state.cc}, {@code ProcessorState::handleBodyResponse}: a body answer's
 *       {@code header_mutation} is applied in the {@code BufferedBodyCallback} (BUFFERED) and
 *       {@code BufferedPartialBodyCallback} (BUFFERED_PARTIAL) states, and only while the headers are still held
 *       ({@code processHeaderMutationIfAvailable}); {@code handleStreamedBodyResponse} (STREAMED) never reads it,
 *       and {@code handleHeadersResponse} continues the headers to the router as soon as they are answered in
 *       STREAMED mode, before any body answer. So STREAMED cannot carry the route.</li>
 *   <li>{@code ext_proc.cc}, {@code Filter::onData}: BUFFERED waits for end of stream, so a client-streaming
 *       AddArtifacts upload larger than the buffer limit fails (the proto documents "the downstream system
 *       will receive an error"). BUFFERED_PARTIAL queues chunks and sends them once, "at either end of stream
 *       or when the buffer is full" ({@code queueOverHighLimit}: more than the request's buffer limit, which for
 *       an HTTP/2 downstream is the stream's flow-control window, {@code initial_stream_window_size}, 256 MiB
 *       unless set: {@code http2/codec_impl.cc}); after the answer, {@code partialBodyProcessed} lets every
 *       later chunk continue unbuffered. The shipped configs set the window to 1 MiB and the router accepts
 *       that much ({@code server.maxBufferedBodyBytes}). A unary or server-streaming
 *       Spark RPC (one request message, then end of stream) is sent whole; an upload is held to at most one
 *       buffer's worth, then streams. Our answer leaves the body unchanged.</li>
 *   <li>{@code processor_state.cc}, {@code handleHeadersResponse}: if the whole body arrived while the header
 *       answer was pending, Envoy sends it at once as a BUFFERED body ({@code BufferedBodyCallback}), where the
 *       header mutation also applies.</li>
 *   <li>{@code ext_proc.cc}, {@code Filter::onReceiveMessage} (the comparison is inline): when
 *       {@code allowed_override_modes} is set, an override must equal one listed mode on every field except
 *       {@code request_header_mode} (Envoy 1.34; 1.32 and 1.33 compare the whole message); the shipped configs
 *       list exactly {@code BODY_MODE}, {@code request_header_mode} included, so both comparisons pass. In an
 *       override, {@code DEFAULT} means "unchanged" only from 1.34, hence every field explicit.</li>
 *   <li>Dynamic metadata on a body answer is honoured like on a header answer
 *       ({@code setDecoderDynamicMetadata} for {@code kRequestBody}).</li>
 *   <li>Timing: {@code message_timeout} (200 ms) runs per message sent to the service; nothing here asks for
 *       more time, so {@code max_message_timeout} stays unset.</li>
 * </ul>
 * If the body gives no usable id (compressed first message, {@code session_id} not first, not a UUID, empty
 * or truncated body) the request is rejected with {@code INVALID_ARGUMENT} and a message that says to add the
 * header. A request without the header that is not a Spark Connect RPC is rejected from its headers, and its
 * body is never asked for.
 */
package io.scrouter.extproc.envoy;
