package io.scrouter.extproc.routing;

import java.util.Optional;

/**
 * Recognises Spark Connect RPC paths ({@code /spark.connect.SparkConnectService/<Method>}).
 *
 * <p>Any method name under the service is accepted, not a fixed list: a newer Spark client may call RPCs
 * this router has never heard of, and they must still reach the session's replica.
 */
public final class SparkRpc {

    public static final String SERVICE_PREFIX = "/spark.connect.SparkConnectService/";
    public static final String RELEASE_SESSION = "ReleaseSession";
    public static final String RELEASE_EXECUTE = "ReleaseExecute";

    private SparkRpc() {
    }

    /** The method name if {@code path} is a Spark Connect RPC, else empty. */
    public static Optional<String> method(String path) {
        if (path == null || !path.startsWith(SERVICE_PREFIX)) {
            return Optional.empty();
        }
        String method = path.substring(SERVICE_PREFIX.length());
        return isMethodName(method) ? Optional.of(method) : Optional.empty();
    }

    /**
     * True for the RPCs that only clean up after a session's work: they go to the session's replica like any
     * other, but never bind a new session, never revive a released one and never keep one alive. The client
     * sends {@code ReleaseExecute} asynchronously, so it may arrive after the session's own
     * {@code ReleaseSession}.
     */
    public static boolean isCleanup(String method) {
        return RELEASE_SESSION.equals(method) || RELEASE_EXECUTE.equals(method);
    }

    /** {@code [A-Za-z][A-Za-z0-9_]{0,63}}, checked by hand: this runs on every request. */
    private static boolean isMethodName(String m) {
        int n = m.length();
        if (n == 0 || n > 64 || !isLetter(m.charAt(0))) {
            return false;
        }
        for (int i = 1; i < n; i++) {
            char c = m.charAt(i);
            if (!isLetter(c) && !(c >= '0' && c <= '9') && c != '_') {
                return false;
            }
        }
        return true;
    }

    private static boolean isLetter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }
}
