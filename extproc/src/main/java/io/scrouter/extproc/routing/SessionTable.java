package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * The near-cache's storage: every session in primitive arrays, with no object per session.
 *
 * <p>Why not a map of objects: a router under a stream of new sessions holds each one for the idle TTL. As objects
 * (an id string, a map node, an entry) every session was copied between the survivor spaces at each young
 * collection until promoted, and each insert wrote a reference to a young object into the old map, so young pauses
 * grew with the sessions held (20–160 ms with two routers on one core, past the Redis deadline: see
 * {@code loadtest/README.md}, "What to change", item 12). Here a session id, a UUID, is two longs; its binding is an
 * index into the few distinct bindings the router has seen; its times are longs. The arrays hold no references, so
 * a collection neither copies nor scans them.
 *
 * <p>Layout: 16 segments, each an open-addressing table (linear probing, at most half full, backward-shift
 * deletion, so no tombstones) behind its own lock. Idle entries are dropped when met ({@link #get}) and by
 * {@link #sweepNext}, one segment per call. A full segment evicts the least recently used of a few entries it
 * samples, as a clock hand would: an approximation of least-recently-used order, not an exact one.
 */
final class SessionTable {

    private static final int SEGMENT_BITS = 4;
    private static final int SEGMENT_COUNT = 1 << SEGMENT_BITS;
    private static final int MIN_CAPACITY = 16;
    /** Occupied entries an eviction compares: enough to avoid a recent session, few enough to stay cheap. */
    private static final int EVICTION_SAMPLE = 8;

    private final Segment[] segments = new Segment[SEGMENT_COUNT];
    private final long idleNanos;
    private final int segmentMax;
    private int sweepCursor;

    /** Distinct bindings, each stored once; sessions hold their index. Grows only with new drivers and states. */
    private final Map<Binding, Integer> bindingIds = new ConcurrentHashMap<>();
    private volatile Binding[] bindings = new Binding[0];

    /**
     * @param maxSessions most sessions held (each segment holds a sixteenth, rounded up)
     * @param idleNanos   a session not used for this long is forgotten
     */
    SessionTable(long maxSessions, long idleNanos) {
        this.idleNanos = idleNanos;
        this.segmentMax = (int) Math.max(1, Math.min(1 << 28, (maxSessions + SEGMENT_COUNT - 1) / SEGMENT_COUNT));
        for (int i = 0; i < SEGMENT_COUNT; i++) {
            segments[i] = new Segment();
        }
    }

    /** A session's fields as read. {@code touch}: a use, which counts and resets the idle timer. */
    CachedBinding get(String session, long nowNanos, long nowMillis, boolean touch) {
        long hi = high(session);
        long lo = low(session);
        long h = mix(hi, lo);
        return segment(h).get(h, hi, lo, nowNanos, nowMillis, touch);
    }

    /** Holds {@code entry} for the session, replacing what was held; a use of the session. */
    void put(String session, CachedBinding entry, long nowNanos) {
        long hi = high(session);
        long lo = low(session);
        long h = mix(hi, lo);
        segment(h).put(h, hi, lo, ref(entry), entry.pushedAtMillis, entry.expiresAtMillis, nowNanos, true);
    }

    /** Holds {@code entry} unless a live entry is held already; true if it was taken. */
    boolean putIfAbsent(String session, CachedBinding entry, long nowNanos) {
        long hi = high(session);
        long lo = low(session);
        long h = mix(hi, lo);
        return segment(h).put(h, hi, lo, ref(entry), entry.pushedAtMillis, entry.expiresAtMillis, nowNanos, false);
    }

    /**
     * True for exactly one caller once {@code everyMillis} has passed since the session's last push: that caller
     * pushes the session to the store (its idle timer, or the binding itself when unconfirmed); the others skip it.
     */
    boolean takeTurnToPush(String session, long nowMillis, long everyMillis) {
        long hi = high(session);
        long lo = low(session);
        long h = mix(hi, lo);
        return segment(h).takeTurnToPush(h, hi, lo, nowMillis, everyMillis);
    }

    /** Calls {@code action} for every entry held and not idle, outside the segments' locks. */
    void forEach(long nowNanos, BiConsumer<String, CachedBinding> action) {
        for (Segment s : segments) {
            List<Object[]> held = s.snapshot(nowNanos);
            for (Object[] e : held) {
                action.accept((String) e[0], (CachedBinding) e[1]);
            }
        }
    }

    /** Drops every entry whose binding matches; the predicate is asked once per distinct binding. */
    void removeIf(Predicate<Binding> drop) {
        Binding[] known = bindings;
        boolean[] dropped = new boolean[known.length];
        boolean any = false;
        for (int i = 0; i < known.length; i++) {
            dropped[i] = drop.test(known[i]);
            any |= dropped[i];
        }
        if (!any) {
            return;
        }
        for (Segment s : segments) {
            s.removeIf(dropped);
        }
    }

    /** Drops the idle entries of the next segment in turn, and shrinks it if it is mostly empty. */
    void sweepNext(long nowNanos, long nowMillis) {
        Segment s;
        synchronized (this) {
            s = segments[sweepCursor];
            sweepCursor = (sweepCursor + 1) & (SEGMENT_COUNT - 1);
        }
        s.sweep(nowNanos, nowMillis);
    }

    long size() {
        long n = 0;
        for (Segment s : segments) {
            n += s.size;
        }
        return n;
    }

    long hits() {
        long n = 0;
        for (Segment s : segments) {
            n += s.counts()[0];
        }
        return n;
    }

    long misses() {
        long n = 0;
        for (Segment s : segments) {
            n += s.counts()[1];
        }
        return n;
    }

    // --- keys ---------------------------------------------------------------------------------------------------

    /** The first 16 hex digits of a canonical UUID ({@link SessionIds#isValid}). */
    static long high(String id) {
        return (hex(id, 0, 8) << 32) | (hex(id, 9, 13) << 16) | hex(id, 14, 18);
    }

    /** The last 16 hex digits of a canonical UUID. */
    static long low(String id) {
        return (hex(id, 19, 23) << 48) | hex(id, 24, 36);
    }

    /** The canonical (lower-case) form of the id held as two longs. */
    static String id(long hi, long lo) {
        return new UUID(hi, lo).toString();
    }

    /** Each ASCII character's hex value, or -1: read on every request, so a table rather than Character.digit. */
    private static final byte[] HEX = new byte[128];

    static {
        Arrays.fill(HEX, (byte) -1);
        for (int d = 0; d < 16; d++) {
            HEX[Character.forDigit(d, 16)] = (byte) d;
            HEX[Character.toUpperCase(Character.forDigit(d, 16))] = (byte) d;
        }
    }

    private static long hex(String s, int from, int to) {
        long v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            int d = c < 128 ? HEX[c] : -1;
            if (d < 0) {
                throw new IllegalArgumentException("not a canonical UUID: " + s);
            }
            v = (v << 4) | d;
        }
        return v;
    }

    /**
     * Spreads a key over segments and slots. Ids are chosen by clients, not always at random, so both halves go
     * through a full 64-bit mix (MurmurHash3's finaliser); the top bits pick the segment, the low bits the slot.
     */
    static long mix(long hi, long lo) {
        long h = hi * 0x9E3779B97F4A7C15L ^ lo;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        return h ^ (h >>> 33);
    }

    private Segment segment(long h) {
        return segments[(int) (h >>> (64 - SEGMENT_BITS))];
    }

    // --- bindings -----------------------------------------------------------------------------------------------

    /** A stored reference: the binding's index and the confirmed flag, plus one so that 0 means an empty slot. */
    private int ref(CachedBinding entry) {
        return ((bindingId(entry.binding) << 1) | (entry.confirmed ? 1 : 0)) + 1;
    }

    private int bindingId(Binding b) {
        Integer id = bindingIds.get(b);
        if (id != null) {
            return id;
        }
        synchronized (bindingIds) {
            id = bindingIds.get(b);
            if (id == null) {
                Binding[] next = Arrays.copyOf(bindings, bindings.length + 1);
                id = bindings.length;
                next[id] = b;
                bindings = next;
                bindingIds.put(b, id);
            }
            return id;
        }
    }

    private CachedBinding entry(int ref, long pushedAt, long expiresAt) {
        int v = ref - 1;
        return new CachedBinding(bindings[v >>> 1], (v & 1) != 0, pushedAt, expiresAt);
    }

    // --- one segment --------------------------------------------------------------------------------------------

    private final class Segment {
        private long[] hi = new long[MIN_CAPACITY];
        private long[] lo = new long[MIN_CAPACITY];
        /** 0: empty slot; otherwise {@link #ref}. */
        private int[] refs = new int[MIN_CAPACITY];
        private long[] lastUsedNanos = new long[MIN_CAPACITY];
        private long[] pushedAtMillis = new long[MIN_CAPACITY];
        private long[] expiresAtMillis = new long[MIN_CAPACITY];
        private int mask = MIN_CAPACITY - 1;
        private int clock;
        volatile int size;
        /** Written under the lock on every use: plain fields, read under the lock ({@link #counts}). */
        private long hits;
        private long misses;

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
            if (idle(i, nowNanos) || touch && nowMillis >= expiresAtMillis[i]) {
                // Forgotten: idle past the TTL, or (when used) a released binding past its grace, whose key in the
                // store is gone too. A quiet read leaves a released entry for the request path to judge.
                removeAt(i);
                if (touch) {
                    misses++;
                }
                return null;
            }
            if (touch) {
                lastUsedNanos[i] = nowNanos;
                hits++;
            }
            return entry(refs[i], pushedAtMillis[i], expiresAtMillis[i]);
        }

        synchronized boolean put(long h, long k1, long k2, int ref, long pushedAt, long expiresAt, long nowNanos,
                                 boolean replace) {
            int i = find(h, k1, k2);
            if (i >= 0 && !replace && !idle(i, nowNanos)) {
                return false;
            }
            if (i < 0) {
                i = insertionSlot(h, nowNanos);
                hi[i] = k1;
                lo[i] = k2;
                size++;
            }
            refs[i] = ref;
            pushedAtMillis[i] = pushedAt;
            expiresAtMillis[i] = expiresAt;
            lastUsedNanos[i] = nowNanos;
            return true;
        }

        synchronized boolean takeTurnToPush(long h, long k1, long k2, long nowMillis, long everyMillis) {
            int i = find(h, k1, k2);
            if (i < 0 || nowMillis - pushedAtMillis[i] < everyMillis) {
                return false;
            }
            pushedAtMillis[i] = nowMillis;
            return true;
        }

        synchronized List<Object[]> snapshot(long nowNanos) {
            List<Object[]> out = new ArrayList<>();
            for (int i = 0; i <= mask; i++) {
                if (refs[i] != 0 && !idle(i, nowNanos)) {
                    out.add(new Object[] {id(hi[i], lo[i]), entry(refs[i], pushedAtMillis[i], expiresAtMillis[i])});
                }
            }
            return out;
        }

        synchronized void removeIf(boolean[] droppedBindings) {
            for (int i = 0; i <= mask; ) {
                int v = refs[i] - 1;
                // After a removal, another entry may have shifted into slot i: look at it again.
                if (v >= 0 && (v >>> 1) < droppedBindings.length && droppedBindings[v >>> 1]) {
                    removeAt(i);
                } else {
                    i++;
                }
            }
        }

        synchronized void sweep(long nowNanos, long nowMillis) {
            for (int i = 0; i <= mask; ) {
                if (refs[i] != 0 && (idle(i, nowNanos) || nowMillis >= expiresAtMillis[i])) {
                    removeAt(i);
                } else {
                    i++;
                }
            }
            int capacity = mask + 1;
            if (capacity > MIN_CAPACITY && size < capacity / 8) {
                resize(Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, size) * 4 - 1) << 1));
            }
        }

        private boolean idle(int i, long nowNanos) {
            return nowNanos - lastUsedNanos[i] >= idleNanos;
        }

        /** The slot holding the key, or -1. */
        private int find(long h, long k1, long k2) {
            for (int i = (int) h & mask; refs[i] != 0; i = (i + 1) & mask) {
                if (hi[i] == k1 && lo[i] == k2) {
                    return i;
                }
            }
            return -1;
        }

        /** An empty slot for a new key, after making room: evicting at the bound, growing past half full. */
        private int insertionSlot(long h, long nowNanos) {
            if (size >= segmentMax) {
                evictOne();
            }
            if ((size + 1) * 2 > mask + 1) {
                // Purge idle entries first; grow unless that left at least a quarter of the slots to fill, so
                // that a full pass is paid for by many inserts.
                for (int i = 0; i <= mask; ) {
                    if (refs[i] != 0 && idle(i, nowNanos)) {
                        removeAt(i);
                    } else {
                        i++;
                    }
                }
                if ((size + 1) * 8 > (mask + 1) * 3) {
                    resize((mask + 1) * 2);
                }
            }
            int i = (int) h & mask;
            while (refs[i] != 0) {
                i = (i + 1) & mask;
            }
            return i;
        }

        /** Removes the least recently used of the next few entries the clock hand passes. */
        private void evictOne() {
            int oldest = -1;
            int seen = 0;
            for (int step = 0; step <= mask && seen < EVICTION_SAMPLE; step++) {
                int i = clock;
                clock = (clock + 1) & mask;
                if (refs[i] != 0) {
                    seen++;
                    if (oldest < 0 || lastUsedNanos[i] - lastUsedNanos[oldest] < 0) {
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
            refs[i] = 0;
            size--;
            int hole = i;
            for (int j = (i + 1) & mask; refs[j] != 0; j = (j + 1) & mask) {
                int home = (int) mix(hi[j], lo[j]) & mask;
                // The entry at j may fill the hole if its home slot is not between the hole and j (cyclically).
                if (((j - home) & mask) >= ((j - hole) & mask)) {
                    move(j, hole);
                    hole = j;
                }
            }
        }

        private void move(int from, int to) {
            hi[to] = hi[from];
            lo[to] = lo[from];
            refs[to] = refs[from];
            lastUsedNanos[to] = lastUsedNanos[from];
            pushedAtMillis[to] = pushedAtMillis[from];
            expiresAtMillis[to] = expiresAtMillis[from];
            refs[from] = 0;
        }

        private void resize(int capacity) {
            long[] oldHi = hi;
            long[] oldLo = lo;
            int[] oldRefs = refs;
            long[] oldUsed = lastUsedNanos;
            long[] oldPushed = pushedAtMillis;
            long[] oldExpires = expiresAtMillis;
            hi = new long[capacity];
            lo = new long[capacity];
            refs = new int[capacity];
            lastUsedNanos = new long[capacity];
            pushedAtMillis = new long[capacity];
            expiresAtMillis = new long[capacity];
            mask = capacity - 1;
            clock = 0;
            for (int from = 0; from < oldRefs.length; from++) {
                if (oldRefs[from] == 0) {
                    continue;
                }
                int i = (int) mix(oldHi[from], oldLo[from]) & mask;
                while (refs[i] != 0) {
                    i = (i + 1) & mask;
                }
                hi[i] = oldHi[from];
                lo[i] = oldLo[from];
                refs[i] = oldRefs[from];
                lastUsedNanos[i] = oldUsed[from];
                pushedAtMillis[i] = oldPushed[from];
                expiresAtMillis[i] = oldExpires[from];
            }
        }
    }
}
