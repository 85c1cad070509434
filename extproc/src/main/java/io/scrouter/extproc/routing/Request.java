package io.scrouter.extproc.routing;

/**
 * What a decision reads from one request.
 *
 * @param path       the {@code :path} pseudo-header, or null
 * @param sessionId  the session id from the header or the body, or null when there is none
 * @param group      the first value of the group header ({@link ReplicaGroups#HEADER}), or null when absent
 * @param groupCount how many group header values the request carried
 */
public record Request(String path, String sessionId, String group, int groupCount) {

    /** A request without a group header. */
    public static Request of(String path, String sessionId) {
        return new Request(path, sessionId, null, 0);
    }

    /** A request of {@code group}, as Envoy sends it after setting the header from the caller's identity. */
    public static Request ofGroup(String path, String sessionId, String group) {
        return new Request(path, sessionId, group, group == null ? 0 : 1);
    }
}
