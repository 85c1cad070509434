package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Which server processes a measured target leaves idle, and that {@code chrt} really sets the policy. */
class BystandersTest {

    private static final long REDIS = 10;

    @Test
    void theMeasuredRunNormallyTheOthersIdleAndRedisIsLeftAlone() {
        Bystanders.Plan p = Bystanders.plan(List.of(21L, 22L), List.of(REDIS, 11L, 12L, 21L, 22L, 31L), REDIS);
        assertThat(p.normal()).containsExactly(21L, 22L);
        assertThat(p.idle()).containsExactly(11L, 12L, 31L);
    }

    @Test
    void redisIsNeverLoweredEvenWhenNotMeasured() {
        Bystanders.Plan p = Bystanders.plan(List.of(11L), List.of(REDIS, 11L, 21L), REDIS);
        assertThat(p.idle()).containsExactly(21L).doesNotContain(REDIS);
        assertThat(p.normal()).containsExactly(11L).doesNotContain(REDIS);
    }

    /** The policy as the kernel reports it for a thread: 0 is SCHED_OTHER, 5 SCHED_IDLE ({@code /proc/PID/sched}). */
    private static int policy(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/sched"))) {
            if (line.startsWith("policy")) {
                return Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new AssertionError("no policy line in /proc/" + pid + "/sched");
    }

    @Test
    void chrtLowersAProcessAndSetsItBack() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/chrt")), "chrt is not installed (apt-get install -y util-linux)");
        assumeTrue(Files.isReadable(Path.of("/proc/self/sched")), "this kernel has no /proc/PID/sched to read the policy");
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            long pid = sleeper.pid();
            assertThat(policy(pid)).as("a process starts under SCHED_OTHER").isEqualTo(0);
            Bystanders.chrt(pid, "-i");
            assertThat(policy(pid)).as("lowered: SCHED_IDLE").isEqualTo(5);
            Bystanders.chrt(pid, "-o");
            assertThat(policy(pid)).as("set back: SCHED_OTHER").isEqualTo(0);
        } finally {
            sleeper.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
