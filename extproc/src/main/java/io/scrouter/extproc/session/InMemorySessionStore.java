package io.scrouter.extproc.session;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.LongSupplier;

/**
 * The embedded default: bindings in this process's memory, with the same semantics as the Redis store.
 * Good for one router (trying the service, tests); several routers need the shared Redis store.
 *
 * <p>Expiry is lazy (checked on read) plus a sweep when sessions are counted, which the pool refresher does
 * on every poll; so memory stays bounded by live sessions without a timer thread of its own. Counting and the
 * sweep go by expiry time ({@link ExpiryIndex}), not over every binding: their cost does not grow with the
 * number of sessions held.
 *
 * <p>Every change of a binding goes through one atomic update of the map ({@code compute} and its kin), which
 * also tells the index, so the two never disagree about a session.
 */
public final class InMemorySessionStore implements SessionStore {

    /** A session's binding and when it expires. */
    record Entry(Binding binding, long expiresAtMillis) {
    }

    private final ConcurrentMap<String, Entry> sessions = new ConcurrentHashMap<>();
    private final ExpiryIndex index = new ExpiryIndex(sessions);
    private final long idleTtlMillis;
    private final long lostTtlMillis;
    private final long releaseGraceMillis;
    private final LongSupplier clock;

    public InMemorySessionStore(SessionTtls ttls, LongSupplier clockMillis) {
        this.idleTtlMillis = ttls.idle().toMillis();
        this.lostTtlMillis = ttls.lost().toMillis();
        this.releaseGraceMillis = ttls.releaseGrace().toMillis();
        this.clock = clockMillis;
    }

    private Entry live(String replica, long now) {
        return new Entry(Binding.to(replica), now + idleTtlMillis);
    }

    /**
     * Live on {@code replica} from {@code now}, never expiring earlier than {@code old} if that was live: two calls
     * for one session may apply out of the order of their clock readings, and the expiry index's counts rely on a
     * live binding only ever moving to a later expiry ({@link ExpiryIndex}).
     */
    private Entry pushed(Entry old, String replica, long now) {
        Entry next = live(replica, now);
        return old != null && old.binding().state() == Binding.State.LIVE
                && old.expiresAtMillis() > next.expiresAtMillis() ? new Entry(next.binding(), old.expiresAtMillis())
                : next;
    }

    /** {@code next}, once the index knows; called inside the map's atomic update of {@code id}. */
    private Entry indexed(String id, Entry old, Entry next) {
        index.changed(id, old, next);
        return next;
    }

    @Override
    public CompletableFuture<Optional<Binding>> find(String sessionId) {
        long now = clock.getAsLong();
        Entry e = sessions.computeIfPresent(sessionId, (id, old) -> {
            if (old.expiresAtMillis() <= now) {
                return indexed(id, old, null);
            }
            return old.binding().state() == Binding.State.LIVE
                    ? indexed(id, old, pushed(old, old.binding().bound(), now)) : old;
        });
        return CompletableFuture.completedFuture(Optional.ofNullable(e).map(Entry::binding));
    }

    @Override
    public CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew) {
        long now = clock.getAsLong();
        boolean[] created = {false};
        Entry e = sessions.compute(sessionId, (id, old) -> {
            if (old != null && old.expiresAtMillis() > now) {
                return old.binding().lost() ? old : indexed(id, old, pushed(old, old.binding().bound(), now));
            }
            created[0] = true;
            return indexed(id, old, live(replicaIfNew, now));
        });
        return CompletableFuture.completedFuture(new Lookup(e.binding(), created[0]));
    }

    @Override
    public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replica) {
        return findOrBind(sessionId, replica).thenApply(Lookup::binding);
    }

    @Override
    public CompletableFuture<Binding> claim(String sessionId, String replica) {
        long now = clock.getAsLong();
        Entry e = sessions.compute(sessionId, (id, old) -> old != null && old.expiresAtMillis() > now
                && old.binding().lost() ? old : indexed(id, old, pushed(old, replica, now)));
        return CompletableFuture.completedFuture(e.binding());
    }

    @Override
    public CompletableFuture<Boolean> touch(String sessionId, String replica) {
        long now = clock.getAsLong();
        Entry e = sessions.computeIfPresent(sessionId, (id, old) -> old.expiresAtMillis() <= now
                ? indexed(id, old, null)
                : old.binding().routable() && old.binding().bound().equals(replica)
                ? indexed(id, old, pushed(old, replica, now)) : old);
        return CompletableFuture.completedFuture(e != null && e.binding().equals(Binding.to(replica)));
    }

    @Override
    public CompletableFuture<Void> release(String sessionId, String replica) {
        long now = clock.getAsLong();
        sessions.computeIfPresent(sessionId, (id, old) -> old.expiresAtMillis() > now
                && old.binding().equals(Binding.to(replica))
                ? indexed(id, old, new Entry(Binding.releasedFrom(replica), now + releaseGraceMillis)) : old);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
        return CompletableFuture.completedFuture(count(replicaIds, 0).live());
    }

    @Override
    public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds,
                                                              long recentWithinMillis) {
        return CompletableFuture.completedFuture(count(replicaIds, recentWithinMillis).recent());
    }

    @Override
    public CompletableFuture<Counts> countLiveAndRecent(Collection<String> replicaIds, long recentWithinMillis) {
        return CompletableFuture.completedFuture(count(replicaIds, recentWithinMillis));
    }

    /** Both counts and the sweep of expired bindings, by expiry time ({@link ExpiryIndex}). */
    private Counts count(Collection<String> replicaIds, long recentWithinMillis) {
        // A live entry expires one idle TTL after its last push, so it was pushed within the window exactly when
        // it expires later than now + idleTtl - window (and it must not have expired): the Redis index's test.
        long now = clock.getAsLong();
        long pushedAfter = Math.max(now, now + idleTtlMillis - recentWithinMillis);
        return index.count(replicaIds, now, pushedAfter);
    }

    @Override
    public CompletableFuture<Long> evictReplica(String replica) {
        long now = clock.getAsLong();
        Binding live = Binding.to(replica);
        Binding plain = Binding.to(Binding.replicaIdOf(replica));
        long[] marked = {0};
        // One atomic update per session (replaceAll may apply its function more than once, and the index must
        // hear of each change once); a replica leaving is rare enough for a walk over every binding.
        for (String sessionId : sessions.keySet()) {
            sessions.computeIfPresent(sessionId, (id, e) -> {
                if ((e.binding().equals(live) || e.binding().equals(plain)) && e.expiresAtMillis() > now) {
                    marked[0]++;
                    return indexed(id, e, new Entry(e.binding().as(Binding.State.LOST), now + lostTtlMillis));
                }
                return e;
            });
        }
        return CompletableFuture.completedFuture(marked[0]);
    }

    /** Number of bindings held, expired ones included until the next sweep (for memory checks). */
    public int size() {
        return sessions.size();
    }

    /** Bindings the last count looked at one by one, the rest being read from the index's tallies (for tests). */
    long lastCountExamined() {
        return index.lastExamined();
    }

    /** The expiry index, for tests that act at a given moment of a count. */
    ExpiryIndex expiryIndex() {
        return index;
    }

    /** Expiry slots the index holds (for tests). */
    int expirySlots() {
        return index.slotCount();
    }
}
