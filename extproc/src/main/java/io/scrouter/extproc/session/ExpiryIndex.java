package io.scrouter.extproc.session;

import io.scrouter.extproc.session.InMemorySessionStore.Entry;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.LongConsumer;

/**
 * The embedded store's bindings grouped by when they expire, so that the pool's poll can count live and recent
 * sessions and sweep expired ones without walking the whole store, which a busy day or a benchmark takes to
 * hundreds of thousands of bindings.
 *
 * <p>Time is cut into slots of {@link #SLOT_MILLIS}. A slot holds the ids of the sessions whose binding expires
 * within it and, per replica, how many of those bindings are live. A count adds up the tallies of the slots wholly
 * after its threshold and looks at single bindings only in the slot where the threshold falls; the sweep drops
 * the slots that have wholly passed and removes their bindings from the store. A poll therefore costs one step per
 * slot (an idle TTL's worth) plus the bindings of at most two slots, whatever the store's size.
 *
 * <p>Kept in step with the store from inside the store's atomic updates: {@link #changed} runs while the store's
 * map holds the session's lock, so a session's moves between slots happen in the order of its bindings. A slot's
 * own fields are guarded by its monitor, taken for a few field updates and never while calling into the store's
 * map; the two locks are therefore always taken in one order, the session's and then a slot's.
 *
 * <p>What a count may see of bindings that change while it runs: a moved binding enters its new slot before it
 * leaves the old one, and a live binding only moves to later slots (the store never brings a live binding's expiry
 * forward, even when two calls apply out of the order of their clock readings); a count reads the slots in time
 * order, looking each next slot up only after reading the one before, so such a binding is counted once or, if it
 * moved between the two reads, twice, never not at all. The store's contract asks for exactly that: every binding
 * made before the call, and an overcount in the safe direction only ({@link SessionStore#countSessions(Collection)}).
 */
final class ExpiryIndex {

    /**
     * Width of one slot. Short enough that the one or two slots a count looks into hold few bindings (a second of
     * new sessions), long enough that a busy session, whose expiry moves on every request, changes slot at most
     * once a second, and that the slots of an idle TTL (1,800 for the default 30 minutes) are quick to add up.
     */
    static final long SLOT_MILLIS = 1_000;

    private static final class Slot {
        /** Every session whose binding expires within this slot, whatever its state: what the sweep removes. */
        final Set<String> ids = new HashSet<>();
        /** Live bindings expiring within this slot, per replica id: what a count adds up. */
        final Map<String, long[]> live = new HashMap<>();
        /** Swept, or left empty, and taken out of the index: a writer that still holds it takes a fresh slot. */
        boolean closed;
    }

    private final ConcurrentSkipListMap<Long, Slot> slots = new ConcurrentSkipListMap<>();
    private final ConcurrentMap<String, Entry> sessions;

    /** Bindings a count looked at one by one, for tests that hold counting independent of the store's size. */
    private volatile long lastExamined;

    /** Run by a count with each slot's key just before it reads the slot (tests: a change at that moment). */
    private volatile LongConsumer beforeReadingSlot;

    ExpiryIndex(ConcurrentMap<String, Entry> sessions) {
        this.sessions = sessions;
    }

    static long slotOf(long millis) {
        return Math.floorDiv(millis, SLOT_MILLIS);
    }

    /** The replica a binding counts for, or null if it does not count (released, lost). */
    private static String countedFor(Entry e) {
        return e != null && e.binding().state() == Binding.State.LIVE ? e.binding().replicaId() : null;
    }

    /**
     * Records that the session's binding changed from {@code old} to {@code next} (either may be null: created,
     * removed). Must be called from inside the store map's atomic update of {@code id}.
     */
    void changed(String id, Entry old, Entry next) {
        long from = old == null ? Long.MIN_VALUE : slotOf(old.expiresAtMillis());
        long to = next == null ? Long.MIN_VALUE : slotOf(next.expiresAtMillis());
        String wasCounted = countedFor(old);
        String counted = countedFor(next);
        if (old != null && next != null && from == to && Objects.equals(wasCounted, counted)) {
            return; // the common case: a busy session's expiry pushed back within its slot
        }
        boolean slotChanges = old == null || next == null || from != to;
        if (next != null) {
            enter(to, id, counted, slotChanges);
        }
        if (old != null) {
            leave(from, id, wasCounted, slotChanges);
        }
    }

    private void enter(long key, String id, String counted, boolean addId) {
        while (true) {
            Slot slot = slots.computeIfAbsent(key, k -> new Slot());
            synchronized (slot) {
                if (!slot.closed) {
                    if (addId) {
                        slot.ids.add(id);
                    }
                    if (counted != null) {
                        slot.live.computeIfAbsent(counted, r -> new long[1])[0]++;
                    }
                    return;
                }
            }
            // Swept while we looked (a binding that expired before it was written, as after a long pause): the
            // sweeper has taken it out or is about to; a fresh slot under the same key is swept on the next poll.
            slots.remove(key, slot);
            addId = true;
        }
    }

    private void leave(long key, String id, String counted, boolean removeId) {
        Slot slot = slots.get(key);
        if (slot == null) {
            return;
        }
        synchronized (slot) {
            if (slot.closed) {
                return;
            }
            if (removeId) {
                slot.ids.remove(id);
            }
            long[] n = counted == null ? null : slot.live.get(counted);
            if (n != null && --n[0] <= 0) {
                slot.live.remove(counted);
            }
            if (slot.ids.isEmpty()) {
                // Every busy session leaves a slot a second; without this, a long idle TTL would keep a trail of
                // empty slots for a count to step over.
                slot.closed = true;
                slots.remove(key, slot);
            }
        }
    }

    /**
     * Sweeps expired bindings and counts, per replica asked for, the live bindings that expire after {@code now}
     * and those that expire after {@code pushedAfter} (no earlier than {@code now}).
     */
    SessionStore.Counts count(Collection<String> replicaIds, long now, long pushedAfter) {
        sweepBefore(now);
        Map<String, long[]> tally = new HashMap<>();
        for (String id : replicaIds) {
            tally.put(id, new long[2]);
        }
        long nowSlot = slotOf(now);
        long recentSlot = slotOf(pushedAfter);
        // Where a threshold falls inside a slot, its bindings are looked at one by one; the slots wholly after it
        // are read from their tallies afterwards, in time order.
        long examined = countOneByOne(nowSlot, now, tally, 0, true);
        examined += countOneByOne(recentSlot, pushedAfter, tally, 1, false);
        Map.Entry<Long, Slot> e = slots.higherEntry(nowSlot);
        while (e != null) {
            long key = e.getKey();
            Slot slot = e.getValue();
            LongConsumer hook = beforeReadingSlot;
            if (hook != null) {
                hook.accept(key);
            }
            boolean closed;
            synchronized (slot) {
                closed = slot.closed;
                for (Map.Entry<String, long[]> t : closed ? Map.<String, long[]>of().entrySet() : tally.entrySet()) {
                    long[] n = slot.live.get(t.getKey());
                    if (n != null) {
                        t.getValue()[0] += n[0];
                        if (key > recentSlot) {
                            t.getValue()[1] += n[0];
                        }
                    }
                }
            }
            Slot again = closed ? slots.get(key) : null;
            // A slot emptied while we looked holds nothing; one created again under its key is read in its place.
            // The next slot is looked up only after this one was read, never before (as an iterator would): a
            // binding that left this slot before the read had entered its later slot first, so that slot is in
            // the map by now and is read next.
            e = again != null && again != slot ? Map.entry(key, again) : slots.higherEntry(key);
        }
        lastExamined = examined;
        Map<String, Long> live = new HashMap<>();
        Map<String, Long> recent = new HashMap<>();
        tally.forEach((id, t) -> {
            live.put(id, t[0]);
            recent.put(id, t[1]);
        });
        return new SessionStore.Counts(live, recent);
    }

    /**
     * Counts into {@code tally[column]} the live bindings of slot {@code key} that expire after {@code after};
     * with {@code sweep}, also removes the slot's bindings that have expired by then ({@code after} is now).
     */
    private long countOneByOne(long key, long after, Map<String, long[]> tally, int column, boolean sweep) {
        List<String> ids = idsOf(slots.get(key));
        for (String id : ids) {
            Entry e = sessions.get(id);
            if (e == null || slotOf(e.expiresAtMillis()) != key) {
                continue; // gone, or moved to a later slot, where its slot's tally counts it
            }
            if (e.expiresAtMillis() <= after) {
                if (sweep) {
                    removeIfExpired(id, after);
                }
                continue;
            }
            String counted = countedFor(e);
            long[] t = counted == null ? null : tally.get(counted);
            if (t != null) {
                t[column]++;
            }
        }
        return ids.size();
    }

    private static List<String> idsOf(Slot slot) {
        if (slot == null) {
            return List.of();
        }
        synchronized (slot) {
            return new ArrayList<>(slot.ids);
        }
    }

    /** Takes every slot that ended by {@code now} out of the index and removes its bindings from the store. */
    private void sweepBefore(long now) {
        long nowSlot = slotOf(now);
        while (true) {
            Map.Entry<Long, Slot> first = slots.firstEntry();
            if (first == null || first.getKey() >= nowSlot) {
                return;
            }
            Slot slot = first.getValue();
            List<String> ids;
            synchronized (slot) {
                slot.closed = true;
                ids = new ArrayList<>(slot.ids);
            }
            slots.remove(first.getKey(), slot);
            for (String id : ids) {
                removeIfExpired(id, now);
            }
        }
    }

    /** Only this binding if it has expired: one made since replaced it and stays. */
    private void removeIfExpired(String id, long now) {
        sessions.computeIfPresent(id, (k, e) -> {
            if (e.expiresAtMillis() > now) {
                return e;
            }
            changed(k, e, null);
            return null;
        });
    }

    /** Sets what a count runs just before it reads each slot after the first threshold (tests only). */
    void beforeReadingSlot(LongConsumer hook) {
        beforeReadingSlot = hook;
    }

    /** Slots held (for tests: empty ones must not pile up). */
    int slotCount() {
        return slots.size();
    }

    /** Bindings the last count looked at one by one (the rest it read from slot tallies). */
    long lastExamined() {
        return lastExamined;
    }
}
