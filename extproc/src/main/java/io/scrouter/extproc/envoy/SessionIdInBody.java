package io.scrouter.extproc.envoy;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Rejections;
import io.scrouter.extproc.routing.SessionIds;

import java.nio.charset.StandardCharsets;

/**
 * Reads {@code session_id} from the start of a Spark Connect request body, for requests that came without
 * the {@code x-spark-session-id} header.
 *
 * <p>The body is gRPC framing: one compressed-flag byte and a 4-byte big-endian message length, then the
 * protobuf request message. Every Spark Connect request message declares {@code session_id} as field 1 and
 * the client writes it first, so a valid id sits in bytes 5..42: tag {@code 0x0A}, a one-byte length (a UUID
 * is 36 bytes) and the UTF-8 id. Only those first {@value #MAX_PREFIX} bytes are ever kept, whatever the body
 * size, and they may arrive split across several body messages. Not thread-safe: one instance per stream,
 * fed in arrival order.
 */
final class SessionIdInBody {

    /** gRPC frame header: compressed flag + 4-byte length. */
    static final int FRAME_HEADER = 5;
    /** Protobuf key of field 1, wire type 2 (length-delimited): {@code (1 << 3) | 2}. */
    static final int SESSION_ID_TAG = 0x0A;
    /** Bytes needed for the longest valid id: frame header, tag, one length byte, 36 id bytes. */
    static final int MAX_PREFIX = FRAME_HEADER + 2 + SessionIds.MAX_LENGTH;

    /** What the bytes seen so far say. */
    sealed interface Outcome {
    }

    /** A syntactically valid UUID was read. */
    record Found(String sessionId) implements Outcome {
    }

    /** The id is not complete yet; more body is on its way. */
    record NeedMore() implements Outcome {
    }

    /** The request cannot be routed from its body: answer this rejection. */
    record Invalid(Decision.Reject rejection) implements Outcome {
    }

    private static final NeedMore NEED_MORE = new NeedMore();

    private final byte[] prefix = new byte[MAX_PREFIX];
    private int seen;

    /**
     * Adds the next body chunk and says whether the session id can be read yet.
     *
     * @param chunk       the bytes of this body message (only the first {@value #MAX_PREFIX} of the whole body
     *                    are kept)
     * @param endOfStream no more body will follow
     */
    Outcome append(ByteString chunk, boolean endOfStream) {
        int take = Math.min(chunk.size(), MAX_PREFIX - seen);
        if (take > 0) {
            chunk.copyTo(prefix, 0, seen, take);
            seen += take;
        }
        Outcome outcome = read();
        if (outcome instanceof NeedMore && endOfStream) {
            return seen == 0 ? invalid("empty_body", "the request has no " + RouteHeaders.SESSION_ID
                    + " header and no body to read session_id from")
                    : invalid("truncated_body", "the request has no " + RouteHeaders.SESSION_ID + " header and its "
                    + "body ended (" + seen + " bytes) before session_id was complete");
        }
        return outcome;
    }

    private Outcome read() {
        if (seen < 1) {
            return NEED_MORE;
        }
        int flag = prefix[0] & 0xFF;
        if (flag == 1) {
            return invalid("compressed_body", "the request has no " + RouteHeaders.SESSION_ID + " header and its "
                    + "first message is compressed, so the gateway cannot read session_id from it");
        }
        if (flag != 0) {
            return invalid("not_grpc_body", "the request has no " + RouteHeaders.SESSION_ID + " header and its body"
                    + " is not a gRPC message (first byte " + flag + ", expected 0 or 1)");
        }
        if (seen < FRAME_HEADER) {
            return NEED_MORE;
        }
        long messageLength = ((prefix[1] & 0xFFL) << 24) | ((prefix[2] & 0xFFL) << 16)
                | ((prefix[3] & 0xFFL) << 8) | (prefix[4] & 0xFFL);
        if (messageLength < 2) {
            // Too short for a tag and a length: every field is at its default, session_id included.
            return noSessionIdFirst();
        }
        if (seen < FRAME_HEADER + 1) {
            return NEED_MORE;
        }
        if ((prefix[FRAME_HEADER] & 0xFF) != SESSION_ID_TAG) {
            return noSessionIdFirst();
        }
        if (seen < FRAME_HEADER + 2) {
            return NEED_MORE;
        }
        int idLength = prefix[FRAME_HEADER + 1] & 0xFF;
        // A set high bit means a multi-byte varint, i.e. at least 128 bytes: longer than any UUID.
        if (idLength > SessionIds.MAX_LENGTH) {
            return invalid("malformed_session_id", "the request has no " + RouteHeaders.SESSION_ID + " header and "
                    + "the session_id in its first message is too long (at most " + SessionIds.MAX_LENGTH
                    + " chars)");
        }
        if (idLength == 0) {
            return invalid("malformed_session_id", "the request has no " + RouteHeaders.SESSION_ID + " header and "
                    + "the session_id in its first message is empty");
        }
        if (2L + idLength > messageLength) {
            return noSessionIdFirst();
        }
        if (seen < FRAME_HEADER + 2 + idLength) {
            return NEED_MORE;
        }
        String id = new String(prefix, FRAME_HEADER + 2, idLength, StandardCharsets.UTF_8);
        if (!SessionIds.isValid(id)) {
            return invalid("malformed_session_id", "the request has no " + RouteHeaders.SESSION_ID + " header and "
                    + "the session_id in its first message is not a UUID (" + idLength + " bytes); Spark Connect "
                    + "session ids look like 123e4567-e89b-12d3-a456-426614174000");
        }
        return new Found(id);
    }

    private static Outcome noSessionIdFirst() {
        return invalid("no_session_id_in_body", "the request has no " + RouteHeaders.SESSION_ID + " header and its "
                + "first message does not start with session_id (field 1), as every Spark Connect request does");
    }

    /** Every body rejection ends with the same remedy: send the header, which never needs the body. */
    private static Outcome invalid(String reason, String what) {
        return new Invalid(new Decision.Reject(Status.Code.INVALID_ARGUMENT, reason, what + ". Add "
                + RouteHeaders.SESSION_ID + " to the connection string with the same UUID as session_id: "
                + Rejections.EXAMPLE_REMOTE));
    }
}
