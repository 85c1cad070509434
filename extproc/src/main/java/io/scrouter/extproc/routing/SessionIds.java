package io.scrouter.extproc.routing;

import java.util.Locale;

/**
 * Validation of client-supplied session ids. Spark Connect requires a session id to be a UUID, so anything
 * else would fail at the server anyway; refusing it here also keeps odd bytes out of Redis keys and logs.
 */
public final class SessionIds {

    /**
     * The request header that carries a session's id: the client sets it to the same UUID as the connection
     * string's {@code session_id}. Rejections name it, so that users know what to fix.
     */
    public static final String HEADER = "x-spark-session-id";

    /** Longest value accepted: a canonical UUID. */
    public static final int MAX_LENGTH = 36;

    private SessionIds() {
    }

    /** True if {@code id} is a UUID in canonical 8-4-4-4-12 hex form (either case). */
    public static boolean isValid(String id) {
        if (id == null || id.length() != MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < MAX_LENGTH; i++) {
            char c = id.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : Character.digit(c, 16) < 0 || c > 'f') {
                return false;
            }
        }
        return true;
    }

    /** Lower-cases a valid id, so the same session written in two cases maps to one binding. */
    public static String canonical(String id) {
        return id.toLowerCase(Locale.ROOT);
    }
}
