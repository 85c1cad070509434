package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.List;

import static java.nio.charset.StandardCharsets.UTF_8;
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

    /**
     * A child shell that waits for 40 {@code sleep}s of 10 ms in turn blocks about 40 times; at least 20 leaves room
     * for a busy machine where a {@code sleep} could end before the shell waits for it. A single-threaded child, not
     * this JVM: the surefire JVM's threads come and go while the test runs, and a thread that ends takes its counts
     * with it, so a sum over this process can shrink between two readings.
     */
    @Test
    void aProcessThatWaitsIsCountedAsBlocking() throws Exception {
        assumeTrue(ContextSwitches.read(List.of(ProcessHandle.current().pid())).measured(),
                "no /proc/PID/task here (not Linux): nothing to read");
        Process shell = new ProcessBuilder("bash", "-c",
                "read go; for i in $(seq 40); do sleep 0.01; done; echo done; read end").start();
        try (var toShell = shell.getOutputStream();
             var fromShell = new BufferedReader(new InputStreamReader(shell.getInputStream(), UTF_8))) {
            List<Long> pid = List.of(shell.pid());
            ContextSwitches before = ContextSwitches.read(pid);
            assertThat(before.measured()).isTrue();
            toShell.write("go\n".getBytes(UTF_8));
            toShell.flush();
            assertThat(fromShell.readLine()).isEqualTo("done");
            assertThat(ContextSwitches.read(pid).since(before).voluntary()).isGreaterThanOrEqualTo(20);
        } finally {
            shell.destroyForcibly().waitFor();
        }
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
