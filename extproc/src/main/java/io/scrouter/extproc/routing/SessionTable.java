package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;

import java.util.Arrays;
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
 * <p>Layout: 16 segments, each an open-addressing table behind its own lock ({@link SessionSegment}). Idle
 * entries are dropped when met ({@link #get}) and by {@link #sweepNext}, one segment per call. A full segment
 * evicts the least recently used of a few entries it samples, as a clock hand would: an approximation of
 * least-recently-used order, not an exact one.
 */
final class SessionTable {

    private static final int SEGMENT_BITS = 4;
    private static final int SEGMENT_COUNT = 1 << SEGMENT_BITS;

    private final SessionSegment[] segments = new SessionSegment[SEGMENT_COUNT];
    private int sweepCursor;

    /** Distinct bindings, each stored once; sessions hold their index. Grows only with new drivers and states. */
    private final Map<Binding, Integer> bindingIds = new ConcurrentHashMap<>();
    private volatile Binding[] bindings = new Binding[0];

    /**
     * @param maxSessions most sessions held (each segment holds a sixteenth, rounded up)
     * @param idleNanos   a session not used for this long is forgotten
     */
    SessionTable(long maxSessions, long idleNanos) {
        int segmentMax = (int) Math.max(1, Math.min(1 << 28, (maxSessions + SEGMENT_COUNT - 1) / SEGMENT_COUNT));
        for (int i = 0; i < SEGMENT_COUNT; i++) {
            segments[i] = new SessionSegment(this, i, segmentMax, idleNanos);
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
        for (SessionSegment s : segments) {
            for (Map.Entry<String, CachedBinding> e : s.snapshot(nowNanos)) {
                action.accept(e.getKey(), e.getValue());
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
        for (SessionSegment s : segments) {
            s.removeIf(dropped);
        }
    }

    /** Each segment's slots, in order (for tests: when they grow). */
    int[] segmentCapacities() {
        int[] capacities = new int[SEGMENT_COUNT];
        for (int i = 0; i < SEGMENT_COUNT; i++) {
            capacities[i] = segments[i].capacity();
        }
        return capacities;
    }

    /** Drops the idle entries of the next segment in turn, and shrinks it if it is mostly empty. */
    void sweepNext(long nowNanos, long nowMillis) {
        SessionSegment s;
        synchronized (this) {
            s = segments[sweepCursor];
            sweepCursor = (sweepCursor + 1) & (SEGMENT_COUNT - 1);
        }
        s.sweep(nowNanos, nowMillis);
    }

    long size() {
        long n = 0;
        for (SessionSegment s : segments) {
            n += s.size;
        }
        return n;
    }

    long hits() {
        long n = 0;
        for (SessionSegment s : segments) {
            n += s.counts()[0];
        }
        return n;
    }

    long misses() {
        long n = 0;
        for (SessionSegment s : segments) {
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

    private SessionSegment segment(long h) {
        return segments[(int) (h >>> (64 - SEGMENT_BITS))];
    }

    // --- bindings -----------------------------------------------------------------------------------------------

    /** A stored reference: the binding's index and the confirmed flag, plus one so that 0 means an empty slot. */
    int ref(CachedBinding entry) {
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

    /** The entry a stored reference and its times stand for. */
    CachedBinding entry(int ref, long pushedAt, long expiresAt) {
        int v = ref - 1;
        return new CachedBinding(bindings[v >>> 1], (v & 1) != 0, pushedAt, expiresAt);
    }
}
