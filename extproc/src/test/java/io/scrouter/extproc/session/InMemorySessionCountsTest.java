package io.scrouter.extproc.session;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The embedded store's counts and sweep, which go by expiry time ({@link ExpiryIndex}) rather than over every
 * binding: held against a plain model of the store's rules under random operations, held to a cost that does not
 * grow with the number of sessions, and held to never missing a binding while other threads move them.
 */
class InMemorySessionCountsTest {

    private static final Duration IDLE = Duration.ofSeconds(60);
    private static final Duration LOST = Duration.ofSeconds(120);
    private static final Duration GRACE = Duration.ofSeconds(15);
    private static final List<String> REPLICAS = List.of("a", "b", "c");

    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);

    private InMemorySessionStore store(Duration idle) {
        return new InMemorySessionStore(new SessionTtls(idle, LOST, GRACE), clock::get);
    }

    /**
     * The store's rules as the {@link SessionStore} contract states them, one binding per session in a plain map,
     * every expiry checked on every count.
     */
    private static final class Model {
        record Held(String replica, String instance, Binding.State state, long expiresAt) {
            String bound() {
                return instance == null ? replica : replica + "@" + instance;
            }
        }

        final Map<String, Held> held = new HashMap<>();

        private Held unexpired(String id, long now) {
            Held h = held.get(id);
            if (h != null && h.expiresAt <= now) {
                held.remove(id);
                return null;
            }
            return h;
        }

        private static Held live(String bound, long now) {
            int at = bound.indexOf('@');
            return at < 0 ? new Held(bound, null, Binding.State.LIVE, now + IDLE.toMillis())
                    : new Held(bound.substring(0, at), bound.substring(at + 1), Binding.State.LIVE,
                    now + IDLE.toMillis());
        }

        void find(String id, long now) {
            Held h = unexpired(id, now);
            if (h != null && h.state == Binding.State.LIVE) {
                held.put(id, live(h.bound(), now));
            }
        }

        void findOrBind(String id, String bound, long now) {
            Held h = unexpired(id, now);
            if (h == null) {
                held.put(id, live(bound, now));
            } else if (h.state != Binding.State.LOST) {
                held.put(id, live(h.bound(), now));
            }
        }

        void claim(String id, String bound, long now) {
            Held h = unexpired(id, now);
            if (h == null || h.state != Binding.State.LOST) {
                held.put(id, live(bound, now));
            }
        }

        void touch(String id, String bound, long now) {
            Held h = unexpired(id, now);
            if (h != null && h.state != Binding.State.LOST && h.bound().equals(bound)) {
                held.put(id, live(bound, now));
            }
        }

        void release(String id, String bound, long now) {
            Held h = unexpired(id, now);
            if (h != null && h.state == Binding.State.LIVE && h.bound().equals(bound)) {
                held.put(id, new Held(h.replica, h.instance, Binding.State.RELEASED, now + GRACE.toMillis()));
            }
        }

        void evict(String bound, long now) {
            String plain = bound.contains("@") ? bound.substring(0, bound.indexOf('@')) : bound;
            for (String id : new ArrayList<>(held.keySet())) {
                Held h = unexpired(id, now);
                if (h != null && h.state == Binding.State.LIVE
                        && (h.bound().equals(bound) || h.bound().equals(plain))) {
                    held.put(id, new Held(h.replica, h.instance, Binding.State.LOST, now + LOST.toMillis()));
                }
            }
        }

        /** Live bindings per replica that expire after {@code after}. */
        Map<String, Long> liveExpiringAfter(long after, long now) {
            Map<String, Long> n = new HashMap<>();
            REPLICAS.forEach(r -> n.put(r, 0L));
            held.values().forEach(h -> {
                if (h.state == Binding.State.LIVE && h.expiresAt > now && h.expiresAt > after) {
                    n.merge(h.replica, 1L, Long::sum);
                }
            });
            return n;
        }

        long unexpiredCount(long now) {
            return held.values().stream().filter(h -> h.expiresAt > now).count();
        }
    }

    @Test
    void countsAndTheSweepAgreeWithAPlainModelOfTheRulesUnderRandomOperations() throws Exception {
        // Steps straddle the slots' edges and every TTL: sessions expire, move between slots and change state.
        long[] steps = {0, 1, 7, 499, 999, 1_000, 1_001, 2_500, 15_000, 59_999, 61_000};
        long[] windows = {1, 999, 1_000, 30_000, 59_000, 60_000, 120_000};
        String[] bounds = {"a", "b", "c@x", "c@y", "c"};
        for (long seed = 1; seed <= 5; seed++) {
            InMemorySessionStore store = store(IDLE);
            Model model = new Model();
            Random random = new Random(seed);
            for (int op = 0; op < 20_000; op++) {
                String id = "s" + random.nextInt(60);
                String bound = bounds[random.nextInt(bounds.length)];
                long now = clock.get();
                switch (random.nextInt(9)) {
                    case 0 -> {
                        store.find(id).get();
                        model.find(id, now);
                    }
                    case 1, 2 -> {
                        store.findOrBind(id, bound).get();
                        model.findOrBind(id, bound, now);
                    }
                    case 3 -> {
                        store.claim(id, bound).get();
                        model.claim(id, bound, now);
                    }
                    case 4 -> {
                        store.touch(id, bound).get();
                        model.touch(id, bound, now);
                    }
                    case 5 -> {
                        store.release(id, bound).get();
                        model.release(id, bound, now);
                    }
                    case 6 -> {
                        if (random.nextInt(20) == 0) {
                            store.evictReplica(bound).get();
                            model.evict(bound, now);
                        }
                    }
                    case 7 -> clock.addAndGet(steps[random.nextInt(steps.length)]);
                    default -> {
                        long window = windows[random.nextInt(windows.length)];
                        SessionStore.Counts counts = store.countLiveAndRecent(REPLICAS, window).get();
                        long pushedAfter = Math.max(now, now + IDLE.toMillis() - window);
                        String where = "seed " + seed + ", operation " + op + ", window " + window + " ms";
                        assertThat(counts.live()).as("live, " + where).isEqualTo(model.liveExpiringAfter(now, now));
                        assertThat(counts.recent()).as("recent, " + where)
                                .isEqualTo(model.liveExpiringAfter(pushedAfter, now));
                        assertThat(store.size()).as("bindings held after the sweep, " + where)
                                .isEqualTo(model.unexpiredCount(now));
                    }
                }
            }
        }
    }

    @Test
    void aCountLooksAtTheBindingsOfOneSecondNotAtEveryBindingHeld() throws Exception {
        InMemorySessionStore store = store(IDLE);
        // One new session a millisecond for the whole idle TTL: 60,000 live sessions, a thousand per second.
        int sessions = (int) IDLE.toMillis();
        for (int i = 0; i < sessions; i++) {
            store.findOrBind("s" + i, REPLICAS.get(i % REPLICAS.size())).get();
            clock.incrementAndGet();
        }
        long window = IDLE.toMillis() / 2;

        SessionStore.Counts counts = store.countLiveAndRecent(REPLICAS, window).get();

        // Bound at t0 + i, expiring at t0 + i + idle, now t0 + idle: session 0 has just expired, and the recent
        // ones are those bound within the last half of the TTL, after t0 + idle/2.
        assertThat(counts.live().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(sessions - 1);
        assertThat(counts.recent().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(sessions / 2 - 1);
        // The bindings expiring in the second where each threshold falls, a thousand each, and no others.
        long perSecond = sessions / IDLE.toSeconds();
        assertThat(store.lastCountExamined()).isLessThanOrEqualTo(2 * perSecond);
    }

    @Test
    void aBusySessionLeavesNoTrailOfEmptySlotsBehindItsExpiry() throws Exception {
        InMemorySessionStore store = store(Duration.ofDays(30));
        store.findOrBind("busy", "a").get();
        for (int second = 0; second < 1_000; second++) {
            clock.addAndGet(ExpiryIndex.SLOT_MILLIS);
            store.find("busy").get();
        }

        assertThat(store.expirySlots()).as("slots for one session's one binding").isEqualTo(1);
        assertThat(store.countSessions(REPLICAS).get()).containsEntry("a", 1L);
    }

    @Test
    void aCountNeverMissesASessionThatMovesIntoANewSlotJustBeforeTheCountReadsItsOldOne() throws Exception {
        // Two busy sessions, the later one alone in the newest slot. Just before the count reads that slot, the
        // session is pushed a second on, into a slot created then: a count that had looked up the next slot
        // before reading this one (as a map iterator does) finds neither.
        InMemorySessionStore store = store(IDLE);
        store.findOrBind("early", "a").get();
        clock.addAndGet(ExpiryIndex.SLOT_MILLIS);
        store.findOrBind("late", "a").get();
        long lateSlot = ExpiryIndex.slotOf(clock.get() + IDLE.toMillis());
        AtomicBoolean pushed = new AtomicBoolean();
        store.expiryIndex().beforeReadingSlot(key -> {
            if (key == lateSlot && pushed.compareAndSet(false, true)) {
                clock.addAndGet(ExpiryIndex.SLOT_MILLIS);
                store.find("late").join();
            }
        });

        Map<String, Long> counted = store.countSessions(REPLICAS).get();

        assertThat(pushed).as("the session moved during the count").isTrue();
        assertThat(counted).containsEntry("a", 2L);
    }

    @Test
    void aLiveSessionsExpiryIsNeverBroughtForwardByACallThatReadTheClockEarlier() throws Exception {
        // Two calls for one session may apply out of the order of their clock readings; the one applied last must
        // not shorten what the other pushed (a count relies on live bindings only moving to later slots).
        InMemorySessionStore store = store(IDLE);
        store.findOrBind("s", "a").get();
        long boundAt = clock.get();
        clock.addAndGet(-5_000);
        store.find("s").get();
        store.touch("s", "a").get();
        store.findOrBind("s", "b").get();
        store.claim("s", "a").get();

        clock.set(boundAt + IDLE.toMillis() - 1);

        assertThat(store.countSessions(REPLICAS).get()).containsEntry("a", 1L);
        assertThat(store.find("s").get()).contains(Binding.to("a"));
    }

    @Test
    void aCountNeverMissesABindingMadeBeforeItWhileOtherThreadsPushSessionsIntoLaterSlots() throws Exception {
        // A long idle TTL, so nothing expires; every operation moves the clock by a millisecond, so busy sessions
        // cross into a later slot about once per thousand operations, while counts run.
        InMemorySessionStore store = store(Duration.ofDays(1));
        int creations = 40_000;
        AtomicLong created = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        CompletableFuture<Void> creator = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < creations; i++) {
                clock.incrementAndGet();
                store.findOrBind("s" + i, REPLICAS.get(i % REPLICAS.size())).join();
                created.incrementAndGet();
            }
        });
        CompletableFuture<Void> pusher = CompletableFuture.runAsync(() -> {
            Random random = new Random(7);
            for (int i = 0; i < 4 * creations && !done.get(); i++) {
                long n = created.get();
                if (n > 0) {
                    clock.incrementAndGet();
                    store.find("s" + random.nextInt((int) n)).join();
                }
            }
        });
        List<String> missed = new ArrayList<>();
        int counts = 0;
        try {
            for (; counts < 100_000 && !creator.isDone(); counts++) {
                long before = created.get();
                long counted = store.countLiveAndRecent(REPLICAS, 1).get().live().values().stream()
                        .mapToLong(Long::longValue).sum();
                if (counted < before) {
                    missed.add(counted + " counted with " + before + " made before the count");
                }
            }
            creator.join(); // bounded by its count of creations
        } finally {
            done.set(true);
            pusher.join();
        }

        assertThat(missed).as("counts below the bindings made before them, of %d counts", counts).isEmpty();
        assertThat(store.countSessions(REPLICAS).get().values().stream().mapToLong(Long::longValue).sum())
                .as("once quiet, every session once").isEqualTo(creations);
    }
}
