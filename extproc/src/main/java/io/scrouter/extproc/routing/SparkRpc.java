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
