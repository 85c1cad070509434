package io.scrouter.extproc.session;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Session → replica bindings shared by every router, with an idle expiry per session.
 *
 * <p>A replica is given as it is bound ({@code replica} parameters): {@code <id>@<identity>}
 * ({@link io.scrouter.extproc.pool.Replica#boundAs()}), or a plain {@code <id>} for a binding that does not say
 * which driver it is on. Comparisons use the whole form, so a call about one driver of a replica never touches
 * the sessions of another driver under the same id; session counts are per replica id.
 *
 * <p>All calls are asynchronous and must never block the caller's thread; callers add their own deadline.
 * Two routers binding the same new session at the same moment must end up with the same binding:
 * {@link #bindIfAbsent} is the only way a binding is created, and it is atomic in the store.
 */
public interface SessionStore {

    /**
     * The session's binding, refreshing its idle expiry when it is live; released and lost bindings are
     * returned as they are. Used by requests that only clean up ({@code ReleaseExecute}, {@code ReleaseSession}),
     * which must neither bind a session nor revive a released one.
     */
    CompletableFuture<Optional<Binding>> find(String sessionId);

    /**
     * Looks the session up and, if it is unbound, binds it to {@code replicaIfNew}, in one atomic step (one
     * round trip to Redis on the request path, whether the session turns out to be known or new). A live
     * binding's idle expiry is refreshed; a released one is revived (live again, counted, idle expiry); a
     * tombstone is returned as is.
     */
    CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew);

    /**
     * Binds the session to {@code replica} unless it is already bound, and returns the binding in force:
     * ours if we won, the existing one if another router (or an earlier request) got there first.
     */
    CompletableFuture<Binding> bindIfAbsent(String sessionId, String replica);

    /**
     * Binds the session to {@code replica} even if another live binding exists (a placement made while the
     * store was unreachable); a lost-session tombstone is kept. Returns the binding in force afterwards.
     */
    CompletableFuture<Binding> claim(String sessionId, String replica);

    /**
     * Pushes back the idle expiry of a session known to be on {@code replica}, reviving it if it was
     * released there; false if the binding is gone or names another replica.
     */
    CompletableFuture<Boolean> touch(String sessionId, String replica);

    /**
     * Marks a live binding to {@code replica} released (after {@code ReleaseSession}): it keeps routing the
     * session to that replica for the release grace, so RPCs the client sends after its release still land
     * there, but it stops counting among the replica's sessions. It is never deleted at once: the router
     * cannot tell the session's owner from anyone else who knows the id, so a release must not strand a
     * session that is still in use; the owner's next request revives it ({@link #findOrBind}, {@link #touch}).
     */
    CompletableFuture<Void> release(String sessionId, String replica);

    /**
     * Live (unexpired) sessions bound to each replica, as every router sees them. The count includes every binding
     * this store made before the call and, as far as the store can tell, none it made after:
     * {@link io.scrouter.extproc.routing.SessionCounts} relies on both.
     */
    CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds);

    /**
     * Of the live sessions bound to each replica, those whose idle expiry was pushed back within the last
     * {@code recentWithinMillis}: the sessions that recently sent a request, as opposed to notebooks left open.
     * Routers push a busy session's expiry at most once per {@code sessions.refreshEvery}, so a window shorter
     * than that misses sessions that are in use; callers keep it longer. A store that keeps no push times counts
     * every live session (the default).
     */
    default CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds,
                                                              long recentWithinMillis) {
        return countSessions(replicaIds);
    }

    /** Both counts of one poll: every live session per replica, and the recent ones among them. */
    record Counts(Map<String, Long> live, Map<String, Long> recent) {
    }

    /**
     * {@link #countSessions(Collection)} and {@link #countSessions(Collection, long)} in one call, as the pool's
     * poll needs them: a store that can answer both in one pass over its bindings, or in one round trip, does.
     */
    default CompletableFuture<Counts> countLiveAndRecent(Collection<String> replicaIds, long recentWithinMillis) {
        return countSessions(replicaIds).thenCombine(countSessions(replicaIds, recentWithinMillis), Counts::new);
    }

    /**
     * Marks every session bound to a replica's driver that is gone (the replica left the pool, or its identity
     * changed) as lost, kept for the configured lost-TTL so those sessions get a clear error, and takes them
     * out of the replica's session count. Sessions bound to another driver under the same id are left alone.
     * Idempotent: every router may run it. Returns how many sessions were marked.
     *
     * @param replica the driver that is gone, as bound; sessions bound under its plain id are marked too
     */
    CompletableFuture<Long> evictReplica(String replica);

    /**
     * Gets ready for the request path (connections opened, scripts loaded), so the first decisions do not pay
     * for it. Called once before the router reports ready; a failure is not fatal.
     */
    default CompletableFuture<Void> prepare() {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * An identifier of the store's data set, created on first use: it changes when the store loses its data (a
     * Redis restarted without persistence), which is how routers know to write their sessions back.
     */
    default CompletableFuture<String> epoch() {
        return CompletableFuture.completedFuture("local");
    }
}
