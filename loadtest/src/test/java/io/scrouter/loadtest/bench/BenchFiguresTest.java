package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The arithmetic the benchmark's tables rest on: medians and ranges, ratios, Redis counters, Envoy's picker. */
class BenchFiguresTest {

    @Test
    void spreadIsMedianAndRange() {
        Spread odd = Spread.of(List.of(3.0, 1.0, 2.0));
        assertThat(odd.median()).isEqualTo(2.0);
        assertThat(odd.min()).isEqualTo(1.0);
        assertThat(odd.max()).isEqualTo(3.0);
        assertThat(Spread.of(List.of(4.0, 1.0, 2.0, 3.0)).median()).isEqualTo(2.5);
        assertThat(odd.format("%.1f")).isEqualTo("2.0 [1.0–3.0]");
        assertThat(Spread.of(List.of()).format("%.1f")).isEqualTo("–");
    }

    @Test
    void ratiosPairRoundsOfTheSameIndex() {
        Block b = new Block(SessionMix.KNOWN, 32, 1);
        double[] noop = {1000, 2000, 1000};
        double[] router = {900, 1000, 800};
        for (int i = 0; i < 3; i++) {
            b.add(new Round(Target.NOOP, i, noop[i], 0.1, 1.0, 1, 0, new long[] {1}, null, 0, java.util.Map.of(), RouterView.NONE, CpuTimes.NONE));
            b.add(new Round(Target.ROUTER_REDIS, i, router[i], 0.1, 1.0 + i, 1, 0, new long[] {1}, null, 0, java.util.Map.of(), RouterView.NONE, CpuTimes.NONE));
        }
        Spread tp = b.throughputRatio(Target.ROUTER_REDIS);
        assertThat(tp.median()).isCloseTo(0.8, within(1e-9));
        assertThat(tp.min()).isCloseTo(0.5, within(1e-9));
        assertThat(tp.max()).isCloseTo(0.9, within(1e-9));
        assertThat(b.p99Ratio(Target.ROUTER_REDIS).max()).isCloseTo(3.0, within(1e-9));
    }

    @Test
    void redisCountersAreDifferencedPerCommand() {
        RedisCommandStats before = RedisCommandStats.parse("""
                # Commandstats\r
                cmdstat_evalsha:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r
                cmdstat_ping:calls=5,usec=5,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r
                # CPU\r
                used_cpu_sys:1.500000\r
                used_cpu_user:2.000000\r
                """);
        RedisCommandStats after = RedisCommandStats.parse("""
                cmdstat_evalsha:calls=110,usec=1100,usec_per_call=10.00,rejected_calls=0,failed_calls=0
                cmdstat_ping:calls=5,usec=5,usec_per_call=1.00,rejected_calls=0,failed_calls=0
                cmdstat_xadd:calls=100,usec=300,usec_per_call=3.00,rejected_calls=0,failed_calls=0
                used_cpu_sys:2.000000
                used_cpu_user:2.250000
                """);
        RedisCommandStats d = after.since(before);
        assertThat(d.calls()).containsOnlyKeys("evalsha", "xadd").containsEntry("evalsha", 100L)
                .containsEntry("xadd", 100L);
        assertThat(d.totalCalls()).isEqualTo(200);
        assertThat(d.cpuSeconds()).isCloseTo(0.75, within(1e-9));
    }

    @Test
    void leastRequestKeepsTheFirstDrawUnlessALaterOneHasFewerInFlight() {
        LeastRequest lr = new LeastRequest(2, 2);
        Deque<Integer> draws = new ArrayDeque<>(List.of(0, 1, 0, 1, 1, 0, 1, 1));
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(0); // tie: first draw
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(1); // 1 has fewer
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(1); // tie again (1 and 1): first draw
        lr.done(1);
        lr.done(1);
        assertThat(lr.inFlight(0)).isEqualTo(1);
        assertThat(lr.inFlight(1)).isEqualTo(0);
        assertThat(lr.pick(bound -> draws.pop())).isEqualTo(1); // both draws are 1
    }

    @Test
    void freshSessionsAreVersion4UuidsTheRouterAccepts() {
        for (int i = 0; i < 1000; i++) {
            String s = SessionMix.fresh();
            UUID u = UUID.fromString(s);
            assertThat(u.version()).isEqualTo(4);
            assertThat(u.variant()).isEqualTo(2);
            assertThat(io.scrouter.extproc.routing.SessionIds.isValid(s)).isTrue();
        }
    }

    @Test
    void jmapHistogramIsParsedPerClass() {
        RedisHeapBench.Histogram h = RedisHeapBench.parseHistogram("""
                 num     #instances         #bytes  class name (module)
                -------------------------------------------------------
                   1:        100000        4800000  [B (java.base@17.0.15)
                   2:         50000        1200000  io.scrouter.extproc.routing.CachedBinding
                Total        150000        6000000
                """);
        assertThat(h.totalBytes()).isEqualTo(6_000_000);
        assertThat(h.classes().get("[B")).containsExactly(100000, 4800000);
        assertThat(h.classes().get("io.scrouter.extproc.routing.CachedBinding")).containsExactly(50000, 1200000);
    }

    @Test
    void gcPausesAreReadFromTheGcLog() {
        List<Double> pauses = GcPauses.millis("""
                [0.012s][info][gc] Using G1
                [3.101s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->6M(1024M) 4.321ms
                [9.500s][info][gc] GC(1) Pause Young (Concurrent Start) (Metadata GC Threshold) 40M->9M(1024M) 12ms
                [9.600s][info][gc] GC(2) Concurrent Mark Cycle 55.000ms
                [9.700s][info][gc] GC(2) Pause Remark 20M->20M(1024M) 1.500ms
                """);
        assertThat(pauses).containsExactly(4.321, 12.0, 1.5);
        assertThat(GcPauses.millis("[0.007s][info][gc] Using Serial")).isEmpty();
        assertThat(GcPauses.summary(pauses)).isEqualTo("3 pauses, p50 4.32 ms, p99 12.00 ms, max 12.00 ms");
    }

    @Test
    void youngPausesLeaveFullCollectionsOut() {
        assertThat(GcPauses.young("""
                [0.003s][info][gc] Using Serial
                [1.430s][info][gc] GC(0) Pause Full (Heap Inspection Initiated GC) 30M->12M(384M) 31.250ms
                [2.101s][info][gc] GC(1) Pause Young (Allocation Failure) 117M->31M(365M) 10.666ms
                [2.500s][info][gc] GC(2) Pause Young (Allocation Failure) 131M->33M(365M) 0.250ms
                """)).containsExactly(10.666, 0.25);
    }

    @Test
    void processCpuIsUserPlusSystemTicksCountedFromTheLastParenthesis() {
        // A command name may hold spaces and parentheses: fields are counted after the last ')'.
        String stat = "4380 (java (router) x) S 1 4380 4380 0 -1 4194560 52311 0 12 0 1234 567 0 0 20 0 41 0 "
                + "3204567 4398046511 60123 18446744073709551615 1 1 0 0 0 0 4 0 16800975 0 0 0 17 0 0 0 0 0 0";
        assertThat(CpuTimes.processTicks(stat)).isEqualTo(1234 + 567);
    }

    @Test
    void theJitsShareIsTheCompilerThreadsAsProcNamesThem() {
        String rest = " S 1 4380 4380 0 -1 4194560 52311 0 12 0 700 5 0 0 20 0 41 0 3204567 4398046511 60123";
        assertThat(CpuTimes.isJitThread("4391 (C2 CompilerThre)" + rest)).isTrue();
        assertThat(CpuTimes.isJitThread("4392 (C1 CompilerThre)" + rest)).isTrue();
        assertThat(CpuTimes.isJitThread("4400 (scrouter-io-1-1)" + rest)).isFalse();
        assertThat(CpuTimes.isJitThread("4401 (VM Thread)" + rest)).isFalse();
        assertThat(CpuTimes.processTicks("4391 (C2 CompilerThre)" + rest)).isEqualTo(705);
    }

    @Test
    void theJitsCpuIsDifferencedThreadByThreadAsCompilerThreadsComeAndGo() {
        // Thread 11 compiled 30 ticks more; thread 12 ended (its ticks leave with it); thread 13 started and ran 20.
        CpuTimes before = new CpuTimes(1000, 150, java.util.Map.of(11L, 100L, 12L, 50L), 0, 0, 0, 0);
        CpuTimes after = new CpuTimes(1400, 150, java.util.Map.of(11L, 130L, 13L, 20L), 0, 0, 0, 0);
        CpuTimes round = after.since(before);
        assertThat(round.jitTicks()).isEqualTo(30 + 20);
        assertThat(round.processTicks()).isEqualTo(400);
        assertThat(round.jitMicrosPerAnswer(1000)).isCloseTo(500.0, within(1e-9));
    }

    @Test
    void coreBusyLeavesOutIdleAndIowait() {
        String procStat = """
                cpu  880187 0 135702 5324706 935 0 35264 0 0 0
                cpu0 100 5 50 800 20 3 7 15 0 0
                cpu1 10 0 10 70 10 0 0 0 0 0
                intr 1 2 3
                """;
        // busy, all, and the steal (eighth column) within busy
        assertThat(CpuTimes.coreTicks(procStat, 0)).containsExactly(100 + 5 + 50 + 3 + 7 + 15, 1000, 15);
        assertThat(CpuTimes.coreTicks(procStat, 1)).containsExactly(20, 100, 0);
        assertThat(CpuTimes.coreTicks("cpu0 10 0 10 70 10\n", 0)).as("a line without a steal column")
                .containsExactly(20, 100, 0);
    }

    @Test
    void theHostsStealIsReportedPerTargetAndOnlyWhenThereWasAny() {
        Block b = new Block(SessionMix.KNOWN, 32, 1);
        // 200 ticks per core per round; the host took 10 then 30 of the servers' core in the no-op's rounds, 50 in
        // the router's, and 4 of the client's core in every round.
        for (int i = 0; i < 2; i++) {
            b.add(new Round(Target.NOOP, i, 1000, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0, java.util.Map.of(),
                    RouterView.NONE, new CpuTimes(1, 0, java.util.Map.of(), 120, 200, 100, 200, -1, 10 + 20 * i, 4)));
            b.add(new Round(Target.ROUTER_REDIS, i, 900, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0,
                    java.util.Map.of(), RouterView.NONE,
                    new CpuTimes(2, 0, java.util.Map.of(), 160, 200, 100, 200, -1, 50, 4)));
        }
        assertThat(BenchReport.cpuLine(b)).contains("the host took", "no-op's 10.0 [5.0–15.0]% and 2.0 [2.0–2.0]%",
                "router, Redis store's 25.0 [25.0–25.0]% and 2.0 [2.0–2.0]%");

        Block calm = new Block(SessionMix.KNOWN, 32, 1);
        calm.add(new Round(Target.NOOP, 0, 1000, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0, java.util.Map.of(),
                RouterView.NONE, new CpuTimes(1, 0, java.util.Map.of(), 120, 200, 100, 200, -1, 0, 0)));
        assertThat(BenchReport.cpuLine(calm)).as("no steal, nothing said").doesNotContain("the host took");
        CpuTimes before = new CpuTimes(0, 0, java.util.Map.of(), 0, 0, 0, 0, -1, 100, 7);
        CpuTimes after = new CpuTimes(0, 0, java.util.Map.of(), 0, 200, 0, 200, -1, 130, 9);
        assertThat(after.since(before).stealShare(false)).isCloseTo(0.15, within(1e-9));
        assertThat(after.since(before).stealShare(true)).isCloseTo(0.01, within(1e-9));
    }

    @Test
    void eachTargetsWarmupIsReportedWithItsLastJitShareAndACapIsSaid() {
        Block b = new Block(SessionMix.NEW, 4, 2);
        assertThat(BenchReport.warmupLine(b)).as("no warm-up recorded, nothing said").isEmpty();
        b.warmedUp(Target.NOOP, new ProcessBench.Warmup(20, 0.001));
        b.warmedUp(Target.ROUTER_REDIS, new ProcessBench.Warmup(120, 0.12));
        assertThat(BenchReport.warmupLine(b)).isEqualTo("Warm-up (discarded): no-op 20 s (the JIT 0.1% of its CPU at "
                + "the end); router, Redis store 120 s (the JIT 12.0% of its CPU at the end, still compiling at the cap).");
        CpuTimes before = new CpuTimes(100, 10, java.util.Map.of(7L, 10L), 0, 0, 0, 0);
        CpuTimes after = new CpuTimes(300, 0, java.util.Map.of(7L, 60L), 0, 0, 0, 0);
        assertThat(after.since(before).jitShare()).as("50 of 200 ticks in the compiler threads").isEqualTo(0.25);
    }

    @Test
    void cpuPerAnswerIsPairedWithTheNoOpsAndAClientBoundRoundIsSaid() {
        Block b = new Block(SessionMix.KNOWN, 32, 1);
        // Rounds of 1,000 answers: the no-op spends 1 tick (10 ms) on them, the router 2 and then 3.
        // Client core 95% busy in the no-op's rounds, 50% in the router's.
        for (int i = 0; i < 2; i++) {
            b.add(new Round(Target.NOOP, i, 1000, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0,
                    java.util.Map.of(), RouterView.NONE, new CpuTimes(1, 0, java.util.Map.of(), 60, 100, 95, 100)));
            b.add(new Round(Target.ROUTER_REDIS, i, 900, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0,
                    java.util.Map.of(), RouterView.NONE, new CpuTimes(2 + i, 1, java.util.Map.of(), 80, 100, 50, 100)));
        }
        assertThat(b.cpuPerAnswer(Target.NOOP).median()).isCloseTo(10.0, within(1e-9));
        assertThat(b.cpuRatio(Target.ROUTER_REDIS).min()).isCloseTo(2.0, within(1e-9));
        assertThat(b.cpuRatio(Target.ROUTER_REDIS).max()).isCloseTo(3.0, within(1e-9));
        assertThat(b.cpuPerAnswer(Target.ROUTER_EMBEDDED)).isNull();
        String line = BenchReport.cpuLine(b);
        assertThat(line).contains("no-op 10.0 [10.0–10.0] µs, of which the JIT 0.0 [0.0–0.0] µs",
                "(2.50 [2.00–3.00]× the no-op's), of which the JIT 10.0 [10.0–10.0] µs", "no-op 60% and 95%",
                "router, Redis store 80% and 50%");
        assertThat(line).containsOnlyOnce("set the throughput").contains("busy for no-op:");
        assertThat(CpuTimes.NONE.since(CpuTimes.NONE).microsPerAnswer(1000)).isNaN();
    }

    @Test
    void theOtherServersShareOfTheServersCoreIsReportedForEachTargetsRounds() {
        Block b = new Block(SessionMix.NEW, 4, 1);
        // 100 ticks of the servers' core per round; the other servers used 3, then 7 of them in the no-op's rounds,
        // and 12 in each of the Redis-backed router's.
        for (int i = 0; i < 2; i++) {
            b.add(new Round(Target.NOOP, i, 1000, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0, java.util.Map.of(),
                    RouterView.NONE, new CpuTimes(1, 0, java.util.Map.of(), 60, 100, 50, 100, 3 + 4 * i)));
            b.add(new Round(Target.ROUTER_REDIS, i, 900, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0,
                    java.util.Map.of(), RouterView.NONE,
                    new CpuTimes(2, 0, java.util.Map.of(), 80, 100, 50, 100, 12)));
        }
        assertThat(BenchReport.cpuLine(b)).contains("the servers not measured",
                "no-op's 5.0 [3.0–7.0]%", "router, Redis store's 12.0 [12.0–12.0]%");
        Block unread = new Block(SessionMix.NEW, 4, 1);
        unread.add(new Round(Target.NOOP, 0, 1000, 0.1, 1.0, 1000, 0, new long[] {1000}, null, 0, java.util.Map.of(),
                RouterView.NONE, new CpuTimes(1, 0, java.util.Map.of(), 60, 100, 50, 100)));
        assertThat(BenchReport.cpuLine(unread)).as("no bystanders read, nothing said").doesNotContain("not measured");
    }

    @Test
    void aBystandersCpuIsCountedApartFromTheMeasuredProcesses() throws Exception {
        // Measured: a process that only sleeps. Bystander: one that first spins a fixed count, then sleeps.
        Process idle = new ProcessBuilder("sleep", "60").start();
        Process busy = new ProcessBuilder("sh", "-c",
                "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exec sleep 60").start();
        try {
            CpuTimes before = CpuTimes.read(List.of(idle.pid()), List.of(busy.pid()));
            assertThat(before.measured()).isTrue();
            // The spin ends by exec'ing sleep; wait for that (bounded by the process's life: at most its sleep).
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(55);
            while (!java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(busy.pid()), "comm"))
                    .startsWith("sleep") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            CpuTimes spent = CpuTimes.read(List.of(idle.pid()), List.of(busy.pid())).since(before);
            assertThat(spent.processTicks()).as("the measured process only slept").isZero();
            assertThat(spent.bystanderTicks()).as("the bystander's spin, counted apart").isPositive();
            assertThat(CpuTimes.read(List.of(idle.pid())).since(before).bystanderTicks())
                    .as("no bystanders read: none counted").isEqualTo(-1);
        } finally {
            idle.destroyForcibly();
            busy.destroyForcibly();
        }
    }

    @Test
    void theNoOpAnswersWithOneFixedRouteHeader() {
        var mutation = NoopProcessor.ROUTE.getRequestHeaders().getResponse().getHeaderMutation();
        assertThat(mutation.getSetHeadersList()).hasSize(1);
        assertThat(mutation.getSetHeaders(0).getHeader().getKey()).isEqualTo("x-scrouter-upstream");
        assertThat(mutation.getSetHeaders(0).getHeader().getRawValue().toStringUtf8()).isEqualTo("127.0.0.1:15002");
        assertThat(NoopProcessor.ROUTE.hasImmediateResponse()).isFalse();
    }
}
