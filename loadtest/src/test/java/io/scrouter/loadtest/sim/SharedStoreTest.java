package io.scrouter.loadtest.sim;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulated shared store counts recent sessions as the Redis index does: by when each live session's idle
 * timer was last pushed (its bind, then each touch), not by when it last sent a request.
 */
class SharedStoreTest {

    private final AtomicLong clock = new AtomicLong();
    /** Counts arrive at once here; the simulation delays them by the store delay. */
    private final SharedStore store = new SharedStore(clock::get, (at, action) -> action.run(), 0);

    private Map<String, Long> recent(long windowMillis) {
        return store.countSessions(List.of("a", "b"), windowMillis).join();
    }

    @Test
    void aSessionIsRecentForAWindowAfterItsBindAndEachPush() {
        store.bindIfAbsent("s1", "a");
        store.bindIfAbsent("s2", "a");
        store.bindIfAbsent("s3", "b");
        clock.set(50_000);
        store.touch("s2", "a");
        store.touch("s3", "a"); // names another replica than its binding: pushes nothing
        clock.set(90_000);

        assertThat(recent(60_000)).isEqualTo(Map.of("a", 1L, "b", 0L));
        assertThat(recent(120_000)).isEqualTo(Map.of("a", 2L, "b", 1L));
        assertThat(store.countSessions(List.of("a", "b")).join()).isEqualTo(Map.of("a", 2L, "b", 1L));
    }

    @Test
    void aReleasedSessionIsNeitherBoundNorRecent() {
        store.bindIfAbsent("s1", "a");
        store.release("s1", "a");
        assertThat(recent(60_000)).isEqualTo(Map.of("a", 0L, "b", 0L));
        assertThat(store.countSessions(List.of("a")).join()).isEqualTo(Map.of("a", 0L));
    }
}
