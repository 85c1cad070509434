package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.Replica;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Highest-random-weight (rendezvous) hashing: every router that has the same pool picks the same replica
 * for a session without talking to anyone, and removing a replica moves only the sessions it had. Used
 * when the shared store cannot be reached, so that routers still agree.
 */
public final class Rendezvous {

    private Rendezvous() {
    }

    public static Replica pick(String sessionId, List<Replica> replicas) {
        if (replicas.isEmpty()) {
            throw new IllegalArgumentException("no replica to pick from");
        }
        Replica best = null;
        long bestWeight = 0;
        long sessionHash = hash(sessionId, 0xcbf29ce484222325L);
        for (Replica r : replicas) {
            long w = mix(hash(r.id(), sessionHash));
            // Unsigned comparison, ties broken by id so the result does not depend on list order.
            if (best == null || Long.compareUnsigned(w, bestWeight) > 0
                    || (w == bestWeight && r.id().compareTo(best.id()) < 0)) {
                best = r;
                bestWeight = w;
            }
        }
        return best;
    }

    /** FNV-1a over UTF-8 bytes: stable across JVMs and versions, unlike {@link String#hashCode()} mixing. */
    private static long hash(String s, long seed) {
        long h = seed;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= (b & 0xff);
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** A 64-bit finaliser (from SplitMix64) so similar ids spread over the whole range. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
