package io.scrouter.extproc.session;

/**
 * Where a session lives, as the store records it.
 *
 * @param replicaId the replica holding the session's state
 * @param lost      the replica left the pool while the session was bound to it: its state is gone, and the
 *                  session must get a clear error rather than be silently re-created elsewhere
 */
public record Binding(String replicaId, boolean lost) {

    private static final String LOST_PREFIX = "!lost:";

    public static Binding to(String replicaId) {
        return new Binding(replicaId, false);
    }

    public static Binding lostOn(String replicaId) {
        return new Binding(replicaId, true);
    }

    /** The value stored under the session's key. Replica ids cannot contain '!', so the forms never clash. */
    public String encode() {
        return lost ? LOST_PREFIX + replicaId : replicaId;
    }

    public static Binding decode(String value) {
        return value.startsWith(LOST_PREFIX) ? lostOn(value.substring(LOST_PREFIX.length())) : to(value);
    }
}
