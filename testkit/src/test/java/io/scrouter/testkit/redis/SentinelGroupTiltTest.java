package io.scrouter.testkit.redis;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A machine that stalls for over Sentinel's tilt trigger puts every sentinel into TILT mode, in which it fails
 * nothing over for its tilt period; a master killed meanwhile is never failed over, since by the end of the tilt its
 * replica has been cut off for too long ({@link SentinelGroup#killMasterAndAwaitPromotion}). The rig must wait the
 * tilt out before it kills the master. The test makes the sentinels tilt as a stall does (their tilt trigger lowered
 * below their timer's own period, then restored), with a tilt period longer than ten times their
 * {@code down-after-milliseconds}.
 */
class SentinelGroupTiltTest {

    /** Longer than ten times {@code DOWN_AFTER}, the longest a promoted replica may have been cut off. */
    private static final Duration TILT_PERIOD = SentinelGroup.DOWN_AFTER.multipliedBy(12);
    /** Sentinel's own trigger, restored once the sentinels are in tilt ({@code SENTINEL_TILT_TRIGGER}). */
    private static final Duration DEFAULT_TRIGGER = Duration.ofMillis(2000);
    /** Bound on the sentinels entering tilt: their timer runs about ten times a second. */
    private static final Duration TILT_WITHIN = Duration.ofSeconds(10);
    /** Room for a busy machine in the promotion's bound. */
    private static final Duration SLACK = Duration.ofSeconds(10);

    @Test
    void theMasterIsKilledOnlyOnceTheSentinelsAreOutOfTiltAndThenTheReplicaIsPromoted() throws Exception {
        assumeTrue(RedisProcess.installed(), "redis-server is not installed: .ci/run installs it");
        try (SentinelGroup group = SentinelGroup.start()) {
            group.debugTiming("tilt-period", TILT_PERIOD);
            assertThat(group.tiltPeriod()).isEqualTo(TILT_PERIOD);
            // Every timer run now takes longer than the trigger: each sentinel enters tilt on its next run.
            group.debugTiming("tilt-trigger", Duration.ofMillis(1));
            long deadline = System.nanoTime() + TILT_WITHIN.toNanos();
            while (group.sentinelsInTilt() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            group.debugTiming("tilt-trigger", DEFAULT_TRIGGER);
            long tiltSeen = System.nanoTime();
            assertThat(group.sentinelsInTilt()).as("sentinels in tilt").isEqualTo(3);

            group.killMasterAndAwaitPromotion(SLACK);

            assertThat(Duration.ofNanos(System.nanoTime() - tiltSeen)).as("waited out the tilt")
                    .isGreaterThan(TILT_PERIOD.minusSeconds(1));
            assertThat(group.reportedMasterPort()).isEqualTo(group.replica().port());
            assertThat(String.valueOf(group.replica().reply("ROLE"))).startsWith("[master");
        }
    }
}
