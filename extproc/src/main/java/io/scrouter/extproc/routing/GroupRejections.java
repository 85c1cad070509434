package io.scrouter.extproc.routing;

import io.grpc.Status;

import java.util.List;

/** The refusals of replica groups, each with a message that says what to do. */
final class GroupRejections {

    private GroupRejections() {
    }

    static Decision.Reject missing() {
        return new Decision.Reject(Status.Code.UNAUTHENTICATED, "group_missing",
                "this gateway serves Spark Connect per team, and the request carries no team (header "
                        + ReplicaGroups.HEADER + ", which the gateway sets from your login token). Connect with a valid "
                        + "token; if you have one, ask the platform team to map your identity to a group");
    }

    static Decision.Reject repeated(int count) {
        return new Decision.Reject(Status.Code.INVALID_ARGUMENT, "group_repeated",
                "header " + ReplicaGroups.HEADER + " appears " + count + " times; the gateway sets it once from your "
                        + "login token, so send one token only");
    }

    static Decision.Reject unknown(String group) {
        return new Decision.Reject(Status.Code.PERMISSION_DENIED, "group_unknown",
                "your group (" + printable(group) + ") may use no Spark Connect replicas on this gateway; ask the "
                        + "platform team to add it to the router's groups.allow");
    }

    static Decision.Reject otherGroup(String sessionId, String replicaGroup, String requestGroup) {
        return new Decision.Reject(Status.Code.PERMISSION_DENIED, "group_denied",
                "session " + sessionId + " runs on a replica of group " + replicaGroup + ", which your group ("
                        + requestGroup + ") may not use. Use a session of your own: start a new session with a new "
                        + "session_id");
    }

    static Decision.Reject full(String requestGroup, List<String> order) {
        return new Decision.Reject(Status.Code.RESOURCE_EXHAUSTED, "group_full",
                "every Spark Connect replica your group (" + requestGroup + ") may use " + order + " holds as many "
                        + "sessions as it is allowed; retry later, close sessions you no longer need, or ask the "
                        + "platform team for more capacity");
    }

    /** A group value from a header, safe to echo: only the characters a valid name may have. */
    private static String printable(String group) {
        String clean = group.replaceAll("[^A-Za-z0-9._-]", "?");
        return clean.length() > 64 ? clean.substring(0, 64) + "..." : clean;
    }
}
