package io.scrouter.extproc.session;

/**
 * Where a session lives, as the store records it.
 *
 * @param replicaId the replica holding (or that held) the session's state
 * @param state     whether requests of the session are routed there, and whether it counts as a live session
 */
public record Binding(String replicaId, State state) {

    /** What a binding allows. */
    public enum State {
        /** In use: routed to its replica and counted among the replica's sessions. */
        LIVE,
        /**
         * Its client sent {@code ReleaseSession}: still routed to its replica, so the client's late RPCs (an
         * asynchronous {@code ReleaseExecute}) land where the session was, but no longer counted, and kept
         * only for the release grace. A request that does work revives it: a release sent by someone else
         * than the session's owner must not strand the owner.
         */
        RELEASED,
        /**
         * The replica left the pool while the session was bound to it: its state is gone, and the session
         * must get a clear error rather than be silently re-created elsewhere.
         */
        LOST
    }

    private static final String LOST_PREFIX = "!lost:";
    private static final String RELEASED_PREFIX = "!released:";

    public Binding {
        java.util.Objects.requireNonNull(replicaId, "replicaId");
        java.util.Objects.requireNonNull(state, "state");
    }

    public static Binding to(String replicaId) {
        return new Binding(replicaId, State.LIVE);
    }

    public static Binding lostOn(String replicaId) {
        return new Binding(replicaId, State.LOST);
    }

    public static Binding releasedFrom(String replicaId) {
        return new Binding(replicaId, State.RELEASED);
    }

    public boolean lost() {
        return state == State.LOST;
    }

    public boolean released() {
        return state == State.RELEASED;
    }

    /** True if requests of the session go to {@link #replicaId()} (live or released). */
    public boolean routable() {
        return state != State.LOST;
    }

    /**
     * The value stored under the session's key. Replica ids cannot contain '!', so the forms never clash, and
     * the store's scripts recognise every non-live binding by its leading '!'.
     */
    public String encode() {
        return switch (state) {
            case LIVE -> replicaId;
            case LOST -> LOST_PREFIX + replicaId;
            case RELEASED -> RELEASED_PREFIX + replicaId;
        };
    }

    public static Binding decode(String value) {
        if (value.startsWith(LOST_PREFIX)) {
            return lostOn(value.substring(LOST_PREFIX.length()));
        }
        if (value.startsWith(RELEASED_PREFIX)) {
            return releasedFrom(value.substring(RELEASED_PREFIX.length()));
        }
        return to(value);
    }
}
