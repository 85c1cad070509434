package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Reading {@code perf sched timehist} and counting who waited for the core, and who held it meanwhile. */
class SchedTraceTest {

    @Test
    void aTimehistLineIsReadWithItsProcessAndTimes() {
        // Lines as perf 6.1 printed them on this project's bench machine; names may hold spaces.
        SchedTrace.Slice loop = SchedTrace.Slice.parse(
                "    2584.066384 [0000]  scrouter-io-1-1[5384/5362]          0.000      0.021      0.314 ");
        SchedTrace.Slice compiler = SchedTrace.Slice.parse(
                "     703.945601 [0000]  C2 CompilerThre[2702/2663]          1.933     19.836      0.851 ");
        SchedTrace.Slice redis = SchedTrace.Slice.parse(
                "     672.815023 [0000]  redis-server[2492]                101.023      0.959      0.055 ");

        assertThat(loop).isEqualTo(new SchedTrace.Slice(2584.066384, 5362, "scrouter-io-1-1", 0.021, 0.314));
        assertThat(compiler.name()).isEqualTo("C2 CompilerThre");
        assertThat(compiler.pid()).isEqualTo(2663);
        assertThat(redis.pid()).as("a process's main thread has no /pid").isEqualTo(2492);
        assertThat(redis.start()).isCloseTo(672.815023 - 0.000055, within(1e-9));
        assertThat(redis.woken()).isCloseTo(672.815023 - 0.000055 - 0.000959, within(1e-9));
        assertThat(SchedTrace.Slice.parse("           time    cpu  task name  wait time  sch delay   run time"))
                .isNull();
        assertThat(SchedTrace.Slice.parse("--------------- ------  ----------  ---------  ---------  ---------"))
                .isNull();
    }

    @Test
    void waitsCountTheMeasuredPartOnlyAndNameWhoHeldTheCore() {
        long router = 100;
        long redis = 200;
        long other = 300;
        List<SchedTrace.Slice> slices = List.of(
                // Before the measured part (from 10.0 s): not counted.
                new SchedTrace.Slice(9.5, router, "scrouter-io-1-1", 3.0, 0.1),
                // Times in seconds, delays and runs in milliseconds. The router, woken at 10.00005 s, runs
                // 10.0001–10.0009 s.
                new SchedTrace.Slice(10.0009, router, "scrouter-io-1-1", 0.05, 0.8),
                // redis-server woken at 10.0003 s, ran from 10.0011 s: waited 0.8 ms, 0.6 ms of it under the
                // router (10.0003–10.0009) and 0.2 ms under another process (10.0009–10.0011).
                new SchedTrace.Slice(10.0011, other, "kworker", 0.0, 0.2),
                new SchedTrace.Slice(10.0012, redis, "redis-server", 0.8, 0.1),
                // A short wait of redis-server: counted in its delays, not among the long ones.
                new SchedTrace.Slice(10.0020, redis, "redis-server", 0.1, 0.05),
                // After the measured part (to 11.0 s): not counted.
                new SchedTrace.Slice(11.5, redis, "redis-server", 5.0, 0.1));

        SchedTrace.Waits w = SchedTrace.Waits.of(slices, Set.of(router), redis, 10.0, 11.0);

        assertThat(w.serverDelays()).containsExactly(0.05);
        assertThat(w.redisDelays()).containsExactly(0.1, 0.8);
        assertThat(w.redisLongWaitMillis()).isCloseTo(0.8, within(1e-9));
        assertThat(w.redisLongWaitHeldByServersMillis()).isCloseTo(0.6, within(1e-6));
        assertThat(SchedTrace.Waits.describe(w.redisDelays()))
                .isEqualTo("0.800 / 0.800 / 0.800 / 0.800 ms over 2 wake-ups");
        assertThat(SchedTrace.Waits.describe(new double[0])).isEqualTo("no wake-ups");
    }
}
