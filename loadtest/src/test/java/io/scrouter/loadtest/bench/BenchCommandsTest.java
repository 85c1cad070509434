package io.scrouter.loadtest.bench;

import io.scrouter.loadtest.LoadtestCommand;
import io.scrouter.loadtest.cli.CommandText;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParameterException;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The options of the process benchmarks, parsed as {@code loadtest/bin/loadtest} parses them, without running them. */
class BenchCommandsTest {

    private static <T> T parsed(Map<String, String> env, Class<T> type, String... args) {
        StringWriter sink = new StringWriter();
        return type.cast(LoadtestCommand.commandLine(env, new PrintWriter(sink), new PrintWriter(sink)).parseArgs(args)
                .subcommand().commandSpec().userObject());
    }

    private static ProcessBench bench(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "bench";
        System.arraycopy(args, 0, all, 1, args.length);
        return parsed(Map.of(), ProcessBench.class, all);
    }

    @Test
    void defaultsAreTheIssuesLoads() {
        ProcessBench.Settings b = bench().settings();
        assertThat(b.inFlight()).isEqualTo(32);
        assertThat(b.newInFlight()).isEqualTo(4);
        assertThat(b.rounds()).isEqualTo(3);
        assertThat(b.warmupSeconds()).isEqualTo(b.seconds()).isEqualTo(5);
        assertThat(b.leadInSeconds()).isEqualTo(3);
        assertThat(b.known()).isEqualTo(2000);
        assertThat(b.loads()).containsExactly(SessionMix.KNOWN, SessionMix.MIX, SessionMix.NEW);
        assertThat(b.routers()).containsExactly(1, 2);
        assertThat(b.out()).isEqualTo(Path.of("loadtest/results/bench.md"));
        assertThat(b.serverJvm()).containsExactly("-Xmx1g");
        assertThat(b.redisSettings()).as("the router's own follow-up gather window").isEmpty();
    }

    @Test
    void followUpGatherGoesToTheRoutersRedisSectionWithinTheRoutersRange() {
        assertThat(bench("--follow-up-gather", "5ms").settings().redisSettings()).isEqualTo("followUpGather: 5ms");
        assertThat(bench("--follow-up-gather", "0ms").settings().redisSettings()).isEqualTo("followUpGather: 0ms");
        assertThatThrownBy(() -> bench("--follow-up-gather", "21ms").settings())
                .isInstanceOf(ParameterException.class)
                .hasMessage("--follow-up-gather must be between 0ms and 20ms, not 21ms");
        assertThatThrownBy(() -> bench("--follow-up-gather", "5").settings())
                .isInstanceOf(ParameterException.class)
                .hasMessage("--follow-up-gather must be a duration such as 1ms or 5ms, not '5'");
    }

    @Test
    void theServersNotMeasuredIdleUnlessAskedOtherwise() {
        assertThat(bench().settings().idleBystanders()).isTrue();
        assertThat(bench("--bystanders", "normal").settings().idleBystanders()).isFalse();
        assertThatThrownBy(() -> bench("--bystanders", "low").settings())
                .isInstanceOf(ParameterException.class)
                .hasMessage("--bystanders takes idle or normal; not low");
    }

    @Test
    void serverJvmOptionsAreSplitAtSpaces() {
        assertThat(bench("--server-jvm", " -Xmx1g  -XX:+UseZGC ").settings().serverJvm())
                .containsExactly("-Xmx1g", "-XX:+UseZGC");
    }

    @Test
    void takesBothOptionFormsAnyCaseAndDropsRepeats() {
        ProcessBench.Settings b = bench("--in-flight=8", "--loads", "new,NEW,known", "--routers", "2,2",
                "--seconds", "7").settings();
        assertThat(b.inFlight()).isEqualTo(8);
        assertThat(b.loads()).isEqualTo(List.of(SessionMix.NEW, SessionMix.KNOWN));
        assertThat(b.routers()).isEqualTo(List.of(2));
        assertThat(b.warmupSeconds()).as("the warm-up follows --seconds").isEqualTo(7);
    }

    @Test
    void environmentSetsADefaultAndTheCommandLineWins() {
        Map<String, String> env = Map.of("LOADTEST_ROUNDS", "7", "LOADTEST_IN_FLIGHT", "16");
        assertThat(parsed(env, ProcessBench.class, "bench").settings().rounds()).isEqualTo(7);
        assertThat(parsed(env, ProcessBench.class, "bench", "--in-flight", "2").settings().inFlight()).isEqualTo(2);
        assertThat(parsed(env, ProfileBench.class, "bench-profile").settings().inFlight()).isEqualTo(16);
    }

    @Test
    void badValuesSayWhatIsAllowed() {
        assertThatThrownBy(() -> bench("--routers", "3").settings()).isInstanceOf(ParameterException.class)
                .hasMessage("--routers takes 1 and/or 2, separated by commas; not 3");
        assertThatThrownBy(() -> bench("--loads", "known,old")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("'old'").hasMessageContaining("KNOWN, NEW, MIX");
        assertThatThrownBy(() -> bench("--seconds", "0").settings()).isInstanceOf(ParameterException.class)
                .hasMessage("--seconds must be between 1 and 600, not 0");
        assertThatThrownBy(() -> bench("--lead-in-seconds", "61").settings()).isInstanceOf(ParameterException.class)
                .hasMessage("--lead-in-seconds must be between 0 and 60, not 61");
        assertThatThrownBy(() -> bench("--rounds", "three")).isInstanceOf(ParameterException.class)
                .hasMessageContaining("'three' is not an int");
        assertThatThrownBy(() -> parsed(Map.of(), RedisHeapBench.class, "bench-heap-redis", "--sessions"))
                .isInstanceOf(ParameterException.class).hasMessageContaining("--sessions");
        assertThatThrownBy(() -> parsed(Map.of(), RedisHeapBench.class, "bench-heap-redis", "--sessions", "999")
                .settings()).hasMessage("--sessions must be between 1000 and 10000000, not 999");
    }

    @Test
    void warmupGoesOnWhileTheJitIsBusyUpToItsCap() {
        assertThat(ProcessBench.nextWarmupPart(20, 0.30, 5, 120)).as("compiling: one more part").isEqualTo(5);
        assertThat(ProcessBench.nextWarmupPart(20, 0.05, 5, 120)).as("at the threshold: settled").isZero();
        assertThat(ProcessBench.nextWarmupPart(20, Double.NaN, 5, 120)).as("not measured: as fixed").isZero();
        assertThat(ProcessBench.nextWarmupPart(118, 0.30, 5, 120)).as("cut short at the cap").isEqualTo(2);
        assertThat(ProcessBench.nextWarmupPart(120, 0.30, 5, 120)).as("at the cap").isZero();
        ProcessBench.Settings fixed = bench("--warmup-seconds", "20", "--warmup-max-seconds", "10").settings();
        assertThat(fixed.warmupMaxSeconds()).as("never under the shortest warm-up").isEqualTo(20);
        assertThat(bench().settings().warmupMaxSeconds()).isEqualTo(120);
    }

    @Test
    void profileRecordsOneRouterUnlessToldTwo() {
        assertThat(parsed(Map.of(), ProfileBench.class, "bench-profile").settings().routers()).isEqualTo(1);
        assertThat(parsed(Map.of(), ProfileBench.class, "bench-profile", "--routers", "2").settings().routers())
                .isEqualTo(2);
        assertThatThrownBy(() -> parsed(Map.of(), ProfileBench.class, "bench-profile", "--routers", "3").settings())
                .isInstanceOf(ParameterException.class).hasMessage("--routers must be between 1 and 2, not 3");
    }

    @Test
    void redisClientsRunFourAndThirtyTwoInFlightAndCheckEachLevel() {
        RedisClientBench.Settings s = parsed(Map.of(), RedisClientBench.class, "bench-redis-clients").settings();
        assertThat(s.inFlight()).containsExactly(4, 32);
        assertThat(s.warmupSeconds()).isEqualTo(10);
        assertThat(parsed(Map.of(), RedisClientBench.class, "bench-redis-clients", "--in-flight", "8,8,1").settings()
                .inFlight()).containsExactly(8, 1);
        assertThatThrownBy(() -> parsed(Map.of(), RedisClientBench.class, "bench-redis-clients", "--in-flight", "4,0")
                .settings()).hasMessage("--in-flight must be between 1 and 4096, not 0");
    }

    @Test
    void jmhGetsEveryOtherArgumentAsTypedAndItsOwnHelpAfterTheSeparator() {
        assertThat(parsed(Map.of(), JmhBench.class, "bench-jmh", "-e", "Decide", "-f", "1", "-wi", "1", "--", "-h")
                .jmhArguments()).containsExactly("DecisionBench", "-e", "Decide", "-f", "1", "-wi", "1", "-h");
        assertThat(parsed(Map.of(), JmhBench.class, "bench-jmh").jmhArguments()).containsExactly("DecisionBench");
    }

    @Test
    void heapAndFirstRequestsCheckTheirCounts() {
        assertThat(parsed(Map.of(), HeapBench.class, "bench-heap").sessions).containsExactly(100_000, 1_000_000);
        assertThat(parsed(Map.of(), FirstRequests.class, "first-requests", "3").rounds).isEqualTo(3);
        assertThatThrownBy(() -> parsed(Map.of(), FirstRequests.class, "first-requests", "x"))
                .isInstanceOf(ParameterException.class).hasMessageContaining("'x' is not an int");
    }

    @Test
    void theReportedCommandCanBePastedIntoAShell() {
        ProcessBench b = bench("--note", "other work's builds", "--seconds", "5");
        assertThat(CommandText.of(b.spec))
                .isEqualTo("loadtest/bin/loadtest bench --note 'other work'\\''s builds' --seconds 5");
    }
}
