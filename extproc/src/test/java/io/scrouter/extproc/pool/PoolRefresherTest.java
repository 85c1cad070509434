package io.scrouter.extproc.pool;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis or controller outage must not empty the pool, and a burst of on-demand refreshes must cost one
 * poll. The instance store here is a scripted fake so each outcome is exact.
 */
class PoolRefresherTest {

    private static final Replica A = new Replica("a", "10.0.0.1:15002", null, ReplicaState.READY);
    private static final Replica B = new Replica("b", "10.0.0.2:15002", null, ReplicaState.READY);

    /** Answers {@code list()} with whatever the test scripts next, and counts the calls. */
    private static final class ScriptedStore implements InstanceStore {
        final AtomicInteger calls = new AtomicInteger();
        volatile Supplier<CompletableFuture<List<Replica>>> next;

        @Override
        public CompletableFuture<List<Replica>> list() {
            calls.incrementAndGet();
            return next.get();
        }
    }

    private final ScriptedStore store = new ScriptedStore();
    private final ServerPool pool = new ServerPool();
    private final AtomicLong clock = new AtomicLong(1_000_000);
    private final PoolRefresher refresher = new PoolRefresher(store, pool, Duration.ofSeconds(5), clock::get);

    private PoolSnapshot refreshNow() throws Exception {
        return refresher.refresh().get(10, TimeUnit.SECONDS);
    }

    private void storeAnswers(List<Replica> replicas) {
        store.next = () -> CompletableFuture.completedFuture(replicas);
    }

    private void storeFails(String message) {
        store.next = () -> CompletableFuture.failedFuture(new IllegalStateException(message));
    }

    @Test
    void successfulPollReplacesThePool() throws Exception {
        storeAnswers(List.of(A, B));

        PoolSnapshot s = refreshNow();

        assertThat(s.all()).containsExactly(A, B);
        assertThat(pool.snapshot()).isSameAs(s);
        assertThat(refresher.lastError()).isNull();
        assertThat(refresher.lastSuccessMillis()).isEqualTo(1_000_000);
    }

    @Test
    void neverSucceededIsReportedAsMinValue() {
        assertThat(refresher.lastSuccessMillis()).isEqualTo(Long.MIN_VALUE);
        assertThat(refresher.lastError()).isNull();
    }

    @Test
    void failedPollKeepsTheLastKnownPool() throws Exception {
        storeAnswers(List.of(A, B));
        refreshNow();
        PoolSnapshot known = pool.snapshot();

        clock.set(2_000_000);
        storeFails("redis is down");
        PoolSnapshot s = refreshNow();

        // The refresh itself does not fail: it yields the pool in force, which is unchanged.
        assertThat(s).isSameAs(known);
        assertThat(pool.snapshot().all()).containsExactly(A, B);
        assertThat(refresher.lastError()).contains("redis is down");
        assertThat(refresher.lastSuccessMillis()).isEqualTo(1_000_000);
    }

    @Test
    void storeThrowingInsteadOfFailingTheFutureIsAlsoSurvived() throws Exception {
        storeAnswers(List.of(A));
        refreshNow();

        store.next = () -> {
            throw new IllegalStateException("client shut down");
        };
        PoolSnapshot s = refreshNow();

        assertThat(s.all()).containsExactly(A);
        assertThat(refresher.lastError()).contains("client shut down");
    }

    @Test
    void hungStoreTimesOutAndKeepsThePool() throws Exception {
        PoolRefresher quick = new PoolRefresher(store, pool, Duration.ofMillis(30), clock::get);
        storeAnswers(List.of(A));
        quick.refresh().get(10, TimeUnit.SECONDS);

        store.next = CompletableFuture::new; // never completes
        PoolSnapshot s = quick.refresh().get(10, TimeUnit.SECONDS);

        assertThat(s.all()).containsExactly(A);
        assertThat(quick.lastError()).contains("Timeout");
    }

    @Test
    void invalidListingIsRejectedWholeAndThePoolKept() throws Exception {
        storeAnswers(List.of(A));
        refreshNow();

        // Two entries with one id: the pool refuses it; the refresher must not propagate the exception.
        storeAnswers(List.of(B, new Replica("b", "10.0.0.9:15002", null, ReplicaState.READY)));
        PoolSnapshot s = refreshNow();

        assertThat(s.all()).containsExactly(A);
        assertThat(refresher.lastError()).contains("'b'");
    }

    @Test
    void recoversWhenTheStoreIsBack() throws Exception {
        storeAnswers(List.of(A));
        refreshNow();
        storeFails("down");
        refreshNow();
        assertThat(refresher.lastError()).isNotNull();

        clock.set(3_000_000);
        storeAnswers(List.of(A, B));
        PoolSnapshot s = refreshNow();

        assertThat(s.all()).containsExactly(A, B);
        assertThat(refresher.lastError()).isNull();
        assertThat(refresher.lastSuccessMillis()).isEqualTo(3_000_000);
    }

    @Test
    void emptyListingFromAReachableStoreEmptiesThePool() throws Exception {
        // Unlike an outage, a readable store that lists nothing means every replica is gone.
        storeAnswers(List.of(A, B));
        refreshNow();

        storeAnswers(List.of());
        assertThat(refreshNow().size()).isZero();
    }

    @Test
    void concurrentRefreshesShareOnePollInFlight() throws Exception {
        CompletableFuture<List<Replica>> pending = new CompletableFuture<>();
        store.next = () -> pending;
        int callers = 16;
        ExecutorService threads = Executors.newFixedThreadPool(callers);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<CompletableFuture<PoolSnapshot>>> asked = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                asked.add(threads.submit(() -> {
                    go.await();
                    return refresher.refresh();
                }));
            }
            go.countDown();
            List<CompletableFuture<PoolSnapshot>> results = new ArrayList<>();
            for (Future<CompletableFuture<PoolSnapshot>> f : asked) {
                results.add(f.get(10, TimeUnit.SECONDS));
            }

            assertThat(store.calls.get()).isEqualTo(1);
            assertThat(results).allSatisfy(r -> assertThat(r).isSameAs(results.get(0)).isNotDone());

            pending.complete(List.of(A, B));

            for (CompletableFuture<PoolSnapshot> r : results) {
                assertThat(r.get(10, TimeUnit.SECONDS).all()).containsExactly(A, B);
            }
        } finally {
            threads.shutdownNow();
        }
        // Once the shared poll is over, the next refresh polls again.
        storeAnswers(List.of(A));
        assertThat(refreshNow().all()).containsExactly(A);
        assertThat(store.calls.get()).isEqualTo(2);
    }
}
