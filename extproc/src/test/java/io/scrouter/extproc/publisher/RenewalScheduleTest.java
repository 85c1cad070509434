package io.scrouter.extproc.publisher;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How often the publisher writes to Redis, on a fake clock. The regression pinned here: once the stop latch
 * was released, every later wait on it returned at once and the drain renewed without pause.
 */
class RenewalScheduleTest {

    private static final long SECOND = 1_000_000_000L;

    /** A clock that moves only when the schedule waits; a stop arrives at a chosen time, as SIGTERM would. */
    private static final class FakeTime implements RenewalSchedule.Pause {
        long now;
        final long stopAt;
        final List<Long> renewedAt = new ArrayList<>();

        FakeTime(long stopAt) {
            this.stopAt = stopAt;
        }

        @Override
        public boolean untilStopRequested(long nanos) {
            if (now >= stopAt) {
                return true; // a released latch answers at once, every time
            }
            if (now + nanos >= stopAt) {
                now = stopAt;
                return true;
            }
            now += nanos;
            return false;
        }

        @Override
        public void sleep(long nanos) {
            now += nanos;
        }

        void renew() {
            renewedAt.add(now);
            // Bound the loop: a schedule that spins would otherwise never end on a clock that does not move.
            if (renewedAt.size() > 10_000) {
                throw new AssertionError("more than 10,000 renewals: the schedule renews without pause");
            }
        }
    }

    private static FakeTime run(Duration interval, Duration drainFor, long stopAt) throws InterruptedException {
        FakeTime time = new FakeTime(stopAt);
        new RenewalSchedule(time::renew, interval, drainFor, () -> time.now, time).run();
        return time;
    }

    @Test
    void thirtySecondDrainAtTwoSecondIntervalRenewsSixteenTimes() throws InterruptedException {
        // Defaults of the publish command: --interval 2s --drain-for 30s. SIGTERM at t=10 s.
        FakeTime time = run(Duration.ofSeconds(2), Duration.ofSeconds(30), 10 * SECOND);

        List<Long> draining = time.renewedAt.stream().filter(t -> t >= 10 * SECOND).toList();
        // At the signal, then at 12, 14, ..., 40 s: 1 + 30 / 2.
        assertThat(draining).hasSize(16);
        assertThat(draining.get(0)).isEqualTo(10 * SECOND);
        assertThat(draining.get(draining.size() - 1)).isEqualTo(40 * SECOND);
        assertThat(time.now).as("stops when the drain ends").isEqualTo(40 * SECOND);
    }

    @Test
    void whileServingRenewsOncePerIntervalAndAtOnceOnTheStopSignal() throws InterruptedException {
        // SIGTERM at 5.5 s, between two renewals: draining must be published then, not at the next tick.
        FakeTime time = run(Duration.ofSeconds(2), Duration.ZERO, 5_500_000_000L);

        assertThat(time.renewedAt).containsExactly(0L, 2 * SECOND, 4 * SECOND, 5_500_000_000L);
    }

    @Test
    void drainThatIsNotAMultipleOfTheIntervalEndsWithOneRenewalAtItsEnd() throws InterruptedException {
        // Serving renewal at 0, SIGTERM at 1 s, drain until 6 s.
        FakeTime time = run(Duration.ofSeconds(2), Duration.ofSeconds(5), SECOND);

        assertThat(time.renewedAt).containsExactly(0L, SECOND, 3 * SECOND, 5 * SECOND, 6 * SECOND);
    }
}
