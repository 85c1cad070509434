package io.scrouter.extproc.session;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a session lives, as the store records it.
 *
 * @param replicaId the replica holding (or that held) the session's state
 * @param instance  which driver of that replica: the replica's identity when the session was bound (its Spark
 *                  application id as published, else its address), or null for a binding that does not say.
 *                  A replica re-registered at a new address or restarted in place has another identity, and its
 *                  sessions are gone with the old driver.
 * @param state     whether requests of the session are routed there, and whether it counts as a live session
 */
public record Binding(String replicaId, String instance, State state) {

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

    /** Separates the replica id from its instance in the stored value; replica ids cannot contain it. */
    private static final char INSTANCE_SEPARATOR = '@';

    public Binding {
        Objects.requireNonNull(replicaId, "replicaId");
        Objects.requireNonNull(state, "state");
    }

    /**
     * A live binding to {@code replica}, given as it is bound: {@code <id>} or {@code <id>@<instance>}
     * ({@code Replica#boundAs()}).
     */
    public static Binding to(String replica) {
        return decodeBound(replica, State.LIVE);
    }

    public static Binding lostOn(String replica) {
        return decodeBound(replica, State.LOST);
    }

    public static Binding releasedFrom(String replica) {
        return decodeBound(replica, State.RELEASED);
    }

    /** The replica as bound, without the state: {@code <id>} or {@code <id>@<instance>}. */
    public String bound() {
        return instance == null ? replicaId : replicaId + INSTANCE_SEPARATOR + instance;
    }

    /** The same replica and instance in another state. */
    public Binding as(State next) {
        return new Binding(replicaId, instance, next);
    }

    private static Binding decodeBound(String bound, State state) {
        Map<String, Binding> shared = SHARED.get(state);
        Binding known = shared.get(bound);
        if (known != null) {
            return known;
        }
        int at = bound.indexOf(INSTANCE_SEPARATOR);
        Binding b = at < 0 ? new Binding(bound, null, state)
                : new Binding(bound.substring(0, at), bound.substring(at + 1), state);
        if (shared.size() < SHARED_MAX) {
            shared.putIfAbsent(bound, b);
        }
        return b;
    }

    /**
     * Decoded bindings, shared by every session on the same driver: a pool has a handful of drivers while a
     * router may hold a million sessions, each of which would otherwise carry its own copies of the replica id
     * and identity. Bounded, so that odd values cannot grow it; past the bound, bindings are simply not shared.
     */
    private static final Map<State, Map<String, Binding>> SHARED = new EnumMap<>(State.class);
    private static final int SHARED_MAX = 4096;

    static {
        for (State s : State.values()) {
            SHARED.put(s, new ConcurrentHashMap<>());
        }
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
            case LIVE -> bound();
            case LOST -> LOST_PREFIX + bound();
            case RELEASED -> RELEASED_PREFIX + bound();
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

    /** The replica id of a replica as bound ({@code <id>} or {@code <id>@<instance>}). */
    public static String replicaIdOf(String bound) {
        int at = bound.indexOf(INSTANCE_SEPARATOR);
        return at < 0 ? bound : bound.substring(0, at);
    }
}
