package io.scrouter.extproc.routing;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The breaker in front of the store, on explicit timestamps. */
class StoreHealthTest {

    private static final int FAILURES = 3;
    private static final long COOL_DOWN = 1_000;

    private final StoreHealth health = new StoreHealth(FAILURES, COOL_DOWN);

    @Test
    void closedBreakerLetsEveryCallThrough() {
        for (long t = 0; t < 5; t++) {
            assertThat(health.shouldTry(t)).isTrue();
        }
        assertThat(health.isOpen()).isFalse();
    }

    @Test
    void staysClosedBelowTheFailureThreshold() {
        health.failure(100);
        health.failure(101);

        assertThat(health.isOpen()).isFalse();
        assertThat(health.shouldTry(102)).isTrue();
        assertThat(health.shouldTry(103)).isTrue();
    }

    @Test
    void opensAfterConsecutiveFailuresAndRefusesDuringTheCoolDown() {
        health.failure(100);
        health.failure(101);
        health.failure(102);

        assertThat(health.isOpen()).isTrue();
        assertThat(health.shouldTry(102)).isFalse();
        assertThat(health.shouldTry(102 + COOL_DOWN - 1)).isFalse();
    }

    @Test
    void letsExactlyOneTrialThroughPerCoolDown() {
        openAt(100);

        assertThat(health.shouldTry(100 + COOL_DOWN)).isTrue();
        // The trial is in flight: everyone else keeps using the fallback.
        assertThat(health.shouldTry(100 + COOL_DOWN)).isFalse();
        assertThat(health.shouldTry(100 + COOL_DOWN + COOL_DOWN / 2)).isFalse();
        assertThat(health.shouldTry(100 + 2 * COOL_DOWN - 1)).isFalse();
        // Trial gave no answer (or failed): the next one comes one cool-down later.
        assertThat(health.shouldTry(100 + 2 * COOL_DOWN)).isTrue();
        assertThat(health.shouldTry(100 + 2 * COOL_DOWN)).isFalse();
    }

    @Test
    void failedTrialKeepsTheBreakerOpenUntilTheNextTrial() {
        openAt(100);
        long trial = 100 + COOL_DOWN;
        assertThat(health.shouldTry(trial)).isTrue();

        health.failure(trial + 50);

        assertThat(health.isOpen()).isTrue();
        assertThat(health.shouldTry(trial + 60)).isFalse();
        assertThat(health.shouldTry(trial + COOL_DOWN)).isTrue();
    }

    @Test
    void successCloses() {
        openAt(100);
        assertThat(health.shouldTry(100 + COOL_DOWN)).isTrue();

        health.success();

        assertThat(health.isOpen()).isFalse();
        assertThat(health.shouldTry(100 + COOL_DOWN)).isTrue();
        assertThat(health.shouldTry(100 + COOL_DOWN)).isTrue();
    }

    @Test
    void successResetsTheFailureCount() {
        health.failure(1);
        health.failure(2);
        health.success();
        health.failure(3);
        health.failure(4);

        // Only two consecutive failures since the success.
        assertThat(health.isOpen()).isFalse();
        health.failure(5);
        assertThat(health.isOpen()).isTrue();
    }

    @Test
    void concurrentCallersAtTrialTimeGetOneTrialBetweenThem() throws Exception {
        openAt(100);
        long trial = 100 + COOL_DOWN;
        int callers = 16;
        ExecutorService threads = Executors.newFixedThreadPool(callers);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> answers = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                answers.add(threads.submit(() -> {
                    go.await();
                    return health.shouldTry(trial);
                }));
            }
            go.countDown();
            int allowed = 0;
            for (Future<Boolean> a : answers) {
                if (a.get(10, TimeUnit.SECONDS)) {
                    allowed++;
                }
            }
            assertThat(allowed).isEqualTo(1);
        } finally {
            threads.shutdownNow();
        }
    }

    private void openAt(long t) {
        for (int i = 0; i < FAILURES; i++) {
            health.failure(t);
        }
        assertThat(health.isOpen()).isTrue();
    }
}
