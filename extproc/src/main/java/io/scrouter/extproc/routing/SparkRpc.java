package io.scrouter.extproc.routing;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Recognises Spark Connect RPC paths ({@code /spark.connect.SparkConnectService/<Method>}).
 *
 * <p>Any method name under the service is accepted, not a fixed list: a newer Spark client may call RPCs
 * this router has never heard of, and they must still reach the session's replica.
 */
public final class SparkRpc {

    public static final String SERVICE_PREFIX = "/spark.connect.SparkConnectService/";
    public static final String RELEASE_SESSION = "ReleaseSession";

    private static final Pattern METHOD = Pattern.compile("[A-Za-z][A-Za-z0-9_]{0,63}");

    private SparkRpc() {
    }

    /** The method name if {@code path} is a Spark Connect RPC, else empty. */
    public static Optional<String> method(String path) {
        if (path == null || !path.startsWith(SERVICE_PREFIX)) {
            return Optional.empty();
        }
        String method = path.substring(SERVICE_PREFIX.length());
        return METHOD.matcher(method).matches() ? Optional.of(method) : Optional.empty();
    }
}
