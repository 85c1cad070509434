package io.scrouter.extproc.routing;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * One sixteenth of a {@link SessionTable}: an open-addressing table behind one lock. Linear probing, at most half
 * to five eighths full (see {@link #growAt}), backward-shift deletion (so no tombstones). At its bound it evicts the
 * least recently used of the next few entries a clock hand passes.
 */
final class SessionSegment {

    private static final int MIN_CAPACITY = 16;
    /** Occupied entries an eviction compares: enough to avoid a recent session, few enough to stay cheap. */
    private static final int EVICTION_SAMPLE = 8;

    private final SessionTable table;
    private final int max;
    private final long idleNanos;
    /**
     * How full, in 128ths of its slots, this segment gets before it makes room: 64 (half) for the first segment, one
     * more for each next one, up to 79. Segments fill alike (session ids hash evenly), so with one threshold all
     * sixteen grew within a few thousand sessions of each other, and the next young collection copied all their new
     * arrays at once: about 90 MB at a million sessions, a pause of 20 ms on an idle core and over 200 ms on one
     * shared with another router and Redis, past Redis's deadlines. Staggered, the segments grow one at a time
     * while the sessions held rise by about a fifth, a sixteenth of that copying at a time.
     */
    private final int growAt;
    private Slots slots = new Slots(MIN_CAPACITY);
    private int mask = MIN_CAPACITY - 1;
    private int clock;
    volatile int size;
    /** Written under the lock on every use: plain fields, read under the lock ({@link #counts}). */
    private long hits;
    private long misses;

    /** The six arrays of a segment, one slot per index; {@code refs[i] == 0} marks slot i empty. */
    private static final class Slots {
        final long[] hi;
        final long[] lo;
        /** 0: empty slot; otherwise {@link SessionTable#ref}. */
        final int[] refs;
        final long[] lastUsedNanos;
        final long[] pushedAtMillis;
        final long[] expiresAtMillis;

        Slots(int capacity) {
            hi = new long[capacity];
            lo = new long[capacity];
            refs = new int[capacity];
            lastUsedNanos = new long[capacity];
            pushedAtMillis = new long[capacity];
            expiresAtMillis = new long[capacity];
        }

        /** Copies slot {@code from} of {@code source} into slot {@code to} of these arrays. */
        void copy(Slots source, int from, int to) {
            hi[to] = source.hi[from];
            lo[to] = source.lo[from];
            refs[to] = source.refs[from];
            lastUsedNanos[to] = source.lastUsedNanos[from];
            pushedAtMillis[to] = source.pushedAtMillis[from];
            expiresAtMillis[to] = source.expiresAtMillis[from];
        }
    }

    /** @param index this segment's place in its table, 0 to 15: sets when it grows ({@link #growAt}) */
    SessionSegment(SessionTable table, int index, int max, long idleNanos) {
        this.table = table;
        this.growAt = 64 + index;
        this.max = max;
        this.idleNanos = idleNanos;
    }

    /** Slots in the table, used or not. */
    synchronized int capacity() {
        return mask + 1;
    }

    synchronized long[] counts() {
        return new long[] {hits, misses};
    }

    synchronized CachedBinding get(long h, long k1, long k2, long nowNanos, long nowMillis, boolean touch) {
        int i = find(h, k1, k2);
        if (i < 0) {
            if (touch) {
                misses++;
            }
            return null;
        }
        Slots s = slots;
        if (idle(i, nowNanos) || touch && nowMillis >= s.expiresAtMillis[i]) {
            // Forgotten: idle past the TTL, or (when used) a released binding past its grace, whose key in the
            // store is gone too. A quiet read leaves a released entry for the request path to judge.
            removeAt(i);
            if (touch) {
                misses++;
            }
            return null;
        }
        if (touch) {
            s.lastUsedNanos[i] = nowNanos;
            hits++;
        }
        return table.entry(s.refs[i], s.pushedAtMillis[i], s.expiresAtMillis[i]);
    }

    synchronized boolean put(long h, long k1, long k2, int ref, long pushedAt, long expiresAt, long nowNanos,
                             boolean replace) {
        int i = find(h, k1, k2);
        if (i >= 0 && !replace && !idle(i, nowNanos)) {
            return false;
        }
        if (i < 0) {
            i = insertionSlot(h, nowNanos);
            slots.hi[i] = k1;
            slots.lo[i] = k2;
            size++;
        }
        Slots s = slots;
        s.refs[i] = ref;
        s.pushedAtMillis[i] = pushedAt;
        s.expiresAtMillis[i] = expiresAt;
        s.lastUsedNanos[i] = nowNanos;
        return true;
    }

    synchronized boolean takeTurnToPush(long h, long k1, long k2, long nowMillis, long everyMillis) {
        int i = find(h, k1, k2);
        if (i < 0 || nowMillis - slots.pushedAtMillis[i] < everyMillis) {
            return false;
        }
        slots.pushedAtMillis[i] = nowMillis;
        return true;
    }

    synchronized List<Map.Entry<String, CachedBinding>> snapshot(long nowNanos) {
        List<Map.Entry<String, CachedBinding>> out = new ArrayList<>();
        Slots s = slots;
        for (int i = 0; i <= mask; i++) {
            if (s.refs[i] != 0 && !idle(i, nowNanos)) {
                out.add(new AbstractMap.SimpleImmutableEntry<>(SessionTable.id(s.hi[i], s.lo[i]),
                        table.entry(s.refs[i], s.pushedAtMillis[i], s.expiresAtMillis[i])));
            }
        }
        return out;
    }

    /** Drops the entries whose binding index is marked in {@code droppedBindings}. */
    synchronized void removeIf(boolean[] droppedBindings) {
        removeWhere(i -> {
            int binding = (slots.refs[i] - 1) >>> 1;
            return binding < droppedBindings.length && droppedBindings[binding];
        });
    }

    /** Drops idle entries and released ones past their grace, and shrinks the table if it is mostly empty. */
    synchronized void sweep(long nowNanos, long nowMillis) {
        removeWhere(i -> idle(i, nowNanos) || nowMillis >= slots.expiresAtMillis[i]);
        int capacity = mask + 1;
        if (capacity > MIN_CAPACITY && size < capacity / 8) {
            resize(Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, size) * 4 - 1) << 1));
        }
    }

    private boolean idle(int i, long nowNanos) {
        return nowNanos - slots.lastUsedNanos[i] >= idleNanos;
    }

    /** The slot holding the key, or -1. */
    private int find(long h, long k1, long k2) {
        Slots s = slots;
        for (int i = (int) h & mask; s.refs[i] != 0; i = (i + 1) & mask) {
            if (s.hi[i] == k1 && s.lo[i] == k2) {
                return i;
            }
        }
        return -1;
    }

    /** Removes every occupied slot {@code drop} accepts, in one pass. */
    private void removeWhere(IntPredicate drop) {
        for (int i = 0; i <= mask; ) {
            if (slots.refs[i] != 0 && drop.test(i)) {
                // Another entry may have shifted back into slot i: look at it again.
                removeAt(i);
            } else {
                i++;
            }
        }
    }

    /** An empty slot for a new key, after making room: evicting at the bound, growing past {@link #growAt}. */
    private int insertionSlot(long h, long nowNanos) {
        if (size >= max) {
            evictOne();
        }
        long capacity = mask + 1;
        if ((size + 1) * 128L > capacity * growAt) {
            // Purge idle entries first; grow unless that left at least an eighth of the slots to fill, so that a
            // full pass is paid for by many inserts.
            removeWhere(i -> idle(i, nowNanos));
            if ((size + 1) * 128L > capacity * (growAt - 16)) {
                resize((mask + 1) * 2);
            }
        }
        int i = (int) h & mask;
        while (slots.refs[i] != 0) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** Removes the least recently used of the next few entries the clock hand passes. */
    private void evictOne() {
        Slots s = slots;
        int oldest = -1;
        int seen = 0;
        for (int step = 0; step <= mask && seen < EVICTION_SAMPLE; step++) {
            int i = clock;
            clock = (clock + 1) & mask;
            if (s.refs[i] != 0) {
                seen++;
                if (oldest < 0 || s.lastUsedNanos[i] - s.lastUsedNanos[oldest] < 0) {
                    oldest = i;
                }
            }
        }
        if (oldest >= 0) {
            removeAt(oldest);
        }
    }

    /** Empties slot i and shifts back the entries after it that probed past it (no tombstones). */
    private void removeAt(int i) {
        Slots s = slots;
        s.refs[i] = 0;
        size--;
        int hole = i;
        for (int j = (i + 1) & mask; s.refs[j] != 0; j = (j + 1) & mask) {
            int home = (int) SessionTable.mix(s.hi[j], s.lo[j]) & mask;
            // The entry at j may fill the hole if its home slot is not between the hole and j (cyclically).
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                s.copy(s, j, hole);
                s.refs[j] = 0;
                hole = j;
            }
        }
    }

    private void resize(int capacity) {
        Slots old = slots;
        slots = new Slots(capacity);
        mask = capacity - 1;
        clock = 0;
        for (int from = 0; from < old.refs.length; from++) {
            if (old.refs[from] == 0) {
                continue;
            }
            int i = (int) SessionTable.mix(old.hi[from], old.lo[from]) & mask;
            while (slots.refs[i] != 0) {
                i = (i + 1) & mask;
            }
            slots.copy(old, from, i);
        }
    }
}
