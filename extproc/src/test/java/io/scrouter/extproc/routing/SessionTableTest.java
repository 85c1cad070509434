package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The near-cache's primitive table, against a plain map as the model: every session it holds must come back with
 * the binding it was given, whatever inserts, removals and resizes moved it around.
 */
class SessionTableTest {

    private static final long NO_IDLE_EXPIRY = Long.MAX_VALUE / 4;
    private static final List<Binding> BINDINGS = List.of(Binding.to("r1"), Binding.to("r2@app-1"),
            Binding.releasedFrom("r1"), Binding.lostOn("r3@app-9"), Binding.to("r4"));

    @Test
    void holdsWhatAMapHoldsThroughInsertsRemovalsAndResizes() {
        Random random = new Random(42);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            ids.add(new UUID(random.nextLong(), random.nextLong()).toString());
        }
        SessionTable table = new SessionTable(1_000_000, NO_IDLE_EXPIRY);
        Map<String, CachedBinding> model = new HashMap<>();
        long now = 0;
        for (int op = 0; op < 60_000; op++) {
            String id = ids.get(random.nextInt(ids.size()));
            CachedBinding e = new CachedBinding(BINDINGS.get(random.nextInt(BINDINGS.size())), random.nextBoolean(),
                    random.nextInt(1000), random.nextBoolean() ? Long.MAX_VALUE : 1_000_000 + random.nextInt(1000));
            switch (random.nextInt(10)) {
                case 0, 1, 2, 3 -> {
                    table.put(id, e, now);
                    model.put(id, e);
                }
                case 4, 5 -> assertThat(table.putIfAbsent(id, e, now)).isEqualTo(model.putIfAbsent(id, e) == null);
                case 6 -> {
                    // Drops one binding's sessions (as when its driver leaves the pool): removals in bulk.
                    Binding gone = BINDINGS.get(random.nextInt(BINDINGS.size()));
                    table.removeIf(gone::equals);
                    model.values().removeIf(x -> x.binding.equals(gone));
                }
                case 7 -> table.sweepNext(now, 0);
                default -> assertSame(model.get(id), table.get(id, now, 0, random.nextBoolean()));
            }
            now++;
        }
        assertThat(table.size()).isEqualTo(model.size());
        for (String id : ids) {
            assertSame(model.get(id), table.get(id, now, 0, false));
        }
        Map<String, CachedBinding> listed = new HashMap<>();
        table.forEach(now, listed::put);
        assertThat(listed.keySet()).isEqualTo(model.keySet());
    }

    /**
     * The segments fill alike, so they must not all grow at once: a young collection copies every array that grew
     * since the last, and sixteen at once at a million sessions is a pause past Redis's deadlines. Each segment
     * grows to 32,768 slots at another fill, so the growths spread over more than a sixth of the sessions held when
     * the first one grew. (With one threshold for all, this seed's sixteen growths came within 4% of each other.)
     */
    @Test
    void theSegmentsGrowAtDifferentSizes() {
        SessionTable table = new SessionTable(10_000_000, NO_IDLE_EXPIRY);
        Random random = new Random(7);
        CachedBinding entry = new CachedBinding(BINDINGS.get(0), true, 0);
        int target = 32_768;
        List<Integer> grownAt = new ArrayList<>();
        boolean[] grown = new boolean[16];
        for (int n = 1; grownAt.size() < 16 && n <= 16 * target; n++) {
            table.put(new UUID(random.nextLong(), random.nextLong()).toString(), entry, 0);
            int[] capacities = table.segmentCapacities();
            for (int i = 0; i < capacities.length; i++) {
                if (!grown[i] && capacities[i] >= target) {
                    grown[i] = true;
                    grownAt.add(n);
                }
            }
        }
        assertThat(grownAt).as("every segment grew to %d slots", target).hasSize(16);
        int first = grownAt.get(0);
        int last = grownAt.get(15);
        assertThat(last - first).as("sessions between the first segment's growth (at %d) and the last's (at %d)",
                first, last).isGreaterThan(first / 6);
    }

    @Test
    void aTableEmptiedByRemovalsShrinksAndKeepsTheRest() {
        SessionTable table = new SessionTable(1_000_000, NO_IDLE_EXPIRY);
        Random random = new Random(7);
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < 50_000; i++) {
            String id = new UUID(random.nextLong(), random.nextLong()).toString();
            boolean keep = i % 100 == 0;
            table.put(id, new CachedBinding(keep ? BINDINGS.get(0) : BINDINGS.get(1), true, i), 0);
            if (keep) {
                kept.add(id);
            }
        }
        table.removeIf(BINDINGS.get(1)::equals);
        for (int i = 0; i < 16; i++) {
            table.sweepNext(0, 0);
        }
        assertThat(table.size()).isEqualTo(kept.size());
        for (String id : kept) {
            assertThat(table.get(id, 0, 0, false)).as(id).isNotNull()
                    .satisfies(e -> assertThat(e.binding).isEqualTo(BINDINGS.get(0)));
        }
    }

    @Test
    void anIdleSessionIsForgottenAndAUseKeepsItAlive() {
        long idle = 1_000;
        SessionTable table = new SessionTable(100, idle);
        String used = UUID.randomUUID().toString();
        String looked = UUID.randomUUID().toString();
        table.put(used, new CachedBinding(BINDINGS.get(0), true, 0), 0);
        table.put(looked, new CachedBinding(BINDINGS.get(0), true, 0), 0);

        assertThat(table.get(used, idle - 1, 0, true)).isNotNull();
        assertThat(table.get(looked, idle - 1, 0, false)).as("a quiet look does not keep it alive").isNotNull();

        assertThat(table.get(looked, idle, 0, false)).isNull();
        assertThat(table.get(used, idle, 0, true)).as("used at idle - 1, so alive until 2 * idle - 1").isNotNull();
        assertThat(table.get(used, 2 * idle, 0, false)).isNull();
        assertThat(table.size()).isZero();
    }

    @Test
    void aReleasedBindingStopsRoutingAtItsExpiryButIsStillVisibleToQuietReads() {
        SessionTable table = new SessionTable(100, NO_IDLE_EXPIRY);
        String id = UUID.randomUUID().toString();
        table.put(id, new CachedBinding(BINDINGS.get(2), true, 0, 5_000), 0);
        assertThat(table.get(id, 0, 4_999, true)).isNotNull();
        assertThat(table.get(id, 0, 5_000, false)).isNotNull();
        assertThat(table.get(id, 0, 5_000, true)).isNull();
        assertThat(table.get(id, 0, 5_000, false)).as("dropped when used past its expiry").isNull();
    }

    @Test
    void theSweepForgetsIdleSessionsSegmentBySegment() {
        long idle = 1_000;
        SessionTable table = new SessionTable(1_000_000, idle);
        Random random = new Random(3);
        for (int i = 0; i < 2_000; i++) {
            table.put(new UUID(random.nextLong(), random.nextLong()).toString(),
                    new CachedBinding(BINDINGS.get(0), true, 0), 0);
        }
        assertThat(table.size()).isEqualTo(2_000);
        for (int i = 0; i < 16; i++) {
            table.sweepNext(idle - 1, 0);
        }
        assertThat(table.size()).as("none idle yet").isEqualTo(2_000);
        for (int i = 0; i < 15; i++) {
            table.sweepNext(idle, 0);
        }
        assertThat(table.size()).as("one segment of sixteen not swept yet").isBetween(1L, 2_000L / 16 * 3);
        table.sweepNext(idle, 0);
        assertThat(table.size()).isZero();
    }

    @Test
    void atItsBoundTheTableEvictsOldSessionsAndKeepsTheOneInUse() {
        SessionTable table = new SessionTable(160, NO_IDLE_EXPIRY);
        Random random = new Random(11);
        String hot = UUID.randomUUID().toString();
        long now = 0;
        table.put(hot, new CachedBinding(BINDINGS.get(0), true, 0), now++);
        for (int i = 0; i < 20_000; i++) {
            table.put(new UUID(random.nextLong(), random.nextLong()).toString(),
                    new CachedBinding(BINDINGS.get(1), true, 0), now++);
            assertThat(table.get(hot, now++, 0, true)).as("after %d inserts", i + 1).isNotNull();
        }
        assertThat(table.size()).isLessThanOrEqualTo(160);
    }

    @Test
    void oneCallerTakesEachTurnToPush() throws Exception {
        SessionTable table = new SessionTable(100, NO_IDLE_EXPIRY);
        String id = UUID.randomUUID().toString();
        table.put(id, new CachedBinding(BINDINGS.get(0), true, 1_000), 0);
        assertThat(table.takeTurnToPush(id, 1_999, 1_000)).as("not due").isFalse();

        int callers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(callers);
        try {
            CountDownLatch start = new CountDownLatch(1);
            AtomicInteger turns = new AtomicInteger();
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                done.add(pool.submit(() -> {
                    start.await();
                    if (table.takeTurnToPush(id, 2_000, 1_000)) {
                        turns.incrementAndGet();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(1, TimeUnit.MINUTES);
            }
            assertThat(turns).hasValue(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(table.get(id, 0, 0, false).pushedAtMillis).isEqualTo(2_000);
        assertThat(table.takeTurnToPush(UUID.randomUUID().toString(), 5_000, 1)).as("not held").isFalse();
    }

    @Test
    void idsGoInAndComeBackInCanonicalForm() {
        Random random = new Random(5);
        for (int i = 0; i < 1_000; i++) {
            UUID u = new UUID(random.nextLong(), random.nextLong());
            String id = u.toString();
            assertThat(SessionTable.high(id)).isEqualTo(u.getMostSignificantBits());
            assertThat(SessionTable.low(id)).isEqualTo(u.getLeastSignificantBits());
            assertThat(SessionTable.id(SessionTable.high(id), SessionTable.low(id))).isEqualTo(id);
        }
        assertThatThrownBy(() -> SessionTable.high("zzzzzzzz-0000-0000-0000-000000000000"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a canonical UUID");
    }

    @Test
    void countsHitsAndMissesOfUsesOnly() {
        SessionTable table = new SessionTable(100, NO_IDLE_EXPIRY);
        String id = UUID.randomUUID().toString();
        table.get(id, 0, 0, true);
        table.put(id, new CachedBinding(BINDINGS.get(0), true, 0), 0);
        table.get(id, 0, 0, true);
        table.get(id, 0, 0, true);
        table.get(id, 0, 0, false);
        assertThat(table.hits()).isEqualTo(2);
        assertThat(table.misses()).isEqualTo(1);
    }

    private static void assertSame(CachedBinding expected, CachedBinding actual) {
        if (expected == null) {
            assertThat(actual).isNull();
            return;
        }
        assertThat(actual).isNotNull();
        assertThat(actual.binding).isEqualTo(expected.binding);
        assertThat(actual.confirmed).isEqualTo(expected.confirmed);
        assertThat(actual.pushedAtMillis).isEqualTo(expected.pushedAtMillis);
        assertThat(actual.expiresAtMillis).isEqualTo(expected.expiresAtMillis);
    }
}
