package io.scrouter.loadtest.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Which session each request of a load names: one of a fixed set bound beforehand, a new one every time, or a
 * mix. New ids are random version-4 UUIDs drawn from {@link ThreadLocalRandom}: {@link UUID#randomUUID()} goes
 * through one shared {@code SecureRandom}, which would make the client, not the server, the bottleneck.
 */
enum SessionMix {
    KNOWN("known sessions"),
    NEW("new sessions"),
    MIX("mix 90% known / 10% new");

    static final int NEW_PERCENT_IN_MIX = 10;

    private final String title;

    SessionMix(String title) {
        this.title = title;
    }

    String title() {
        return title;
    }

    String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The session of each request, drawing known ones uniformly from {@code known}. */
    Supplier<String> sessions(List<String> known) {
        return switch (this) {
            case KNOWN -> () -> known.get(ThreadLocalRandom.current().nextInt(known.size()));
            case NEW -> SessionMix::fresh;
            case MIX -> () -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                return r.nextInt(100) < NEW_PERCENT_IN_MIX ? fresh() : known.get(r.nextInt(known.size()));
            };
        };
    }

    static List<String> knownSet(int n) {
        List<String> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ids.add(fresh());
        }
        return ids;
    }

    /** A random version-4, variant-1 UUID in canonical lower-case form. */
    static String fresh() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long msb = (r.nextLong() & ~0xF000L) | 0x4000L;
        long lsb = (r.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb).toString();
    }
}
