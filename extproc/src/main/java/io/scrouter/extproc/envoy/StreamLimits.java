package io.scrouter.extproc.envoy;

/**
 * Bounds of one {@code Process} stream.
 *
 * @param decisionDeadlineMillis longest a decision may take before the request is answered UNAVAILABLE; must
 *                               stay under Envoy's {@code message_timeout}
 * @param maxBufferedBodyBytes   the most body bytes Envoy sends in one message (its HTTP/2
 *                               {@code initial_stream_window_size}, which bounds {@code BUFFERED_PARTIAL});
 *                               see {@link #maxBodyMessageBytes()}
 */
public record StreamLimits(long decisionDeadlineMillis, int maxBufferedBodyBytes) {

    /** Room for the {@code ProcessingRequest} fields around the body bytes, which are far smaller. */
    static final int MESSAGE_OVERHEAD_BYTES = 64 << 10;

    /** How much larger than the bound gRPC still reads a message, so that it can be refused with a clear error. */
    static final int CEILING_FACTOR = 8;

    public StreamLimits {
        if (decisionDeadlineMillis <= 0) {
            throw new IllegalArgumentException("decisionDeadlineMillis must be positive, got " + decisionDeadlineMillis);
        }
        if (maxBufferedBodyBytes <= 0) {
            throw new IllegalArgumentException("maxBufferedBodyBytes must be positive, got " + maxBufferedBodyBytes);
        }
    }

    /** The largest body message routed: the bound plus the message's own fields. */
    public int maxBodyMessageBytes() {
        return maxBufferedBodyBytes + MESSAGE_OVERHEAD_BYTES;
    }

    /**
     * The gRPC inbound message limit. A message past it is reset by gRPC itself, which Envoy turns into an
     * unexplained 500; a message between {@link #maxBodyMessageBytes()} and this ceiling gets a clear
     * RESOURCE_EXHAUSTED instead. Only a gateway whose window is far larger than configured can send one.
     */
    public int maxInboundMessageBytes() {
        return (int) Math.min(Integer.MAX_VALUE, (long) maxBufferedBodyBytes * CEILING_FACTOR + MESSAGE_OVERHEAD_BYTES);
    }
}
