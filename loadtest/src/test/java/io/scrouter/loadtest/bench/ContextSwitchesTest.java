package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ContextSwitchesTest {

    /** The tail of a thread's {@code /proc/PID/task/TID/status} as Linux 6 writes it. */
    private static final String STATUS = """
            Name:\tscrouter-io-1-1
            State:\tS (sleeping)
            Tgid:\t28318
            Threads:\t41
            Cpus_allowed_list:\t0
            voluntary_ctxt_switches:\t5523
            nonvoluntary_ctxt_switches:\t16208
            """;

    @Test
    void readsBothCountsOfAStatusFile() {
        assertThat(ContextSwitches.counts(STATUS)).containsExactly(5523, 16208);
        assertThatThrownBy(() -> ContextSwitches.counts("Name:\tjava\n")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void perAnswerIsTheDifferenceOverTheAnswers() {
        ContextSwitches before = new ContextSwitches(1000, 50);
        ContextSwitches after = new ContextSwitches(1300, 1050);
        ContextSwitches round = after.since(before);
        assertThat(round.perAnswer(1000, false)).isEqualTo(0.3);
        assertThat(round.perAnswer(1000, true)).isEqualTo(1.0);
        assertThat(after.since(ContextSwitches.NONE).measured()).isFalse();
        assertThat(round.perAnswer(0, false)).isNaN();
    }

    @Test
    void aThreadOfThisProcessThatSleepsIsCountedAsBlocking() throws Exception {
        long self = ProcessHandle.current().pid();
        ContextSwitches before = ContextSwitches.read(List.of(self));
        assumeTrue(before.measured(), "no /proc/PID/task here (not Linux): nothing to read");
        for (int i = 0; i < 20; i++) {
            Thread.sleep(1);
        }
        // Each sleep blocks this thread once: at least 20 voluntary switches, whatever else the JVM's threads did.
        assertThat(ContextSwitches.read(List.of(self)).since(before).voluntary()).isGreaterThanOrEqualTo(20);
    }

    @Test
    void theReportGivesBlockedAndPreemptedPerAnswerAndRedisOnlyForTheRedisBackedRouter() {
        Block b = new Block(SessionMix.NEW, 4, 1);
        for (int i = 0; i < 3; i++) {
            b.switched(Target.NOOP, new ContextSwitches(250 + 10 * i, 20), new ContextSwitches(0, 0), 1000);
            b.switched(Target.ROUTER_REDIS, new ContextSwitches(230, 640 + 50 * i), new ContextSwitches(720, 30),
                    1000);
        }
        String line = BenchReport.switchesLine(b);
        assertThat(line).contains("no-op 0.26 [0.25–0.27] / 0.02 [0.02–0.02]",
                "router, Redis store 0.23 [0.23–0.23] / 0.69 [0.64–0.74], and redis-server in its rounds 0.72 "
                        + "[0.72–0.72] / 0.03 [0.03–0.03]");
        assertThat(line).doesNotContain("no-op 0.26 [0.25–0.27] / 0.02 [0.02–0.02], and redis-server");
        assertThat(BenchReport.switchesLine(new Block(SessionMix.NEW, 4, 1))).isEmpty();
    }
}
