package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.scrouter.extproc.routing.SparkRpc;

import java.nio.charset.StandardCharsets;

/**
 * The few request headers a decision needs, read from Envoy's header map in one pass.
 *
 * <p>Envoy 1.34 sends values in {@code raw_value} only ({@code mutation_utils.cc}, {@code headersToProto}; the
 * {@code value} path was removed in 1.32); a client of the protocol that fills {@code value} instead is still
 * read. Bytes are decoded as ISO-8859-1 so that no byte is lost or replaced: validation
 * then rejects anything that is not a clean id.
 *
 * @param path              the {@code :path} pseudo-header, or null
 * @param sessionId         the first {@code x-spark-session-id} value, or null
 * @param sessionIdCount    how many {@code x-spark-session-id} entries there were
 * @param clientSetUpstream the client sent our route header itself (it will be overwritten)
 * @param group             the first group header value (set by Envoy from the caller's identity), or null
 * @param groupCount        how many group header entries there were
 */
public record RequestHeaders(String path, String sessionId, int sessionIdCount, boolean clientSetUpstream,
                             String group, int groupCount) {

    public static RequestHeaders read(HeaderMap headers) {
        String path = null;
        String sessionId = null;
        int sessionIdCount = 0;
        boolean upstream = false;
        String group = null;
        int groupCount = 0;
        for (HeaderValue h : headers.getHeadersList()) {
            String key = h.getKey();
            if (key.equals(":path")) {
                path = value(h);
            } else if (key.equalsIgnoreCase(RouteHeaders.SESSION_ID)) {
                sessionIdCount++;
                if (sessionId == null) {
                    sessionId = value(h);
                }
            } else if (key.equalsIgnoreCase(RouteHeaders.UPSTREAM)) {
                upstream = true;
            } else if (key.equalsIgnoreCase(RouteHeaders.GROUP)) {
                groupCount++;
                if (group == null) {
                    group = value(h);
                }
            }
        }
        return new RequestHeaders(path, sessionId, sessionIdCount, upstream, group, groupCount);
    }

    /**
     * True when the session id must come from the body instead: a Spark Connect RPC without the session
     * header. Anything else without the header is rejected from the headers alone, body unread.
     */
    public boolean sessionIdOnlyInBody() {
        return sessionIdCount == 0 && SparkRpc.method(path).isPresent();
    }

    static String value(HeaderValue h) {
        if (!h.getRawValue().isEmpty()) {
            return h.getRawValue().toString(StandardCharsets.ISO_8859_1);
        }
        return h.getValue();
    }
}
