package io.scrouter.extproc.config;

import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.scorer.policy.Policies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The configuration file is the operator's only interface at start-up: every value must land in the typed
 * record, every mistake must stop the service with a message that names the offending key.
 */
class ConfigLoaderTest {

    /** The smallest file that is valid without Redis: one static replica. */
    private static final String MINIMAL = """
            pool:
              static:
                - id: spark-0
                  grpc: 10.0.0.5:15002
            """;

    private static final String FULL = """
            server:
              bindAddress: 127.0.0.1
              port: 9100
              decisionDeadline: 120ms
              drainPeriod: 20s
              maxBufferedBodyBytes: 2097152
              warmUp: false
            redis:
              mode: sentinel
              addresses: [redis://10.0.0.1:26379, redis://10.0.0.2:26379]
              masterName: mymaster
              password: s3cret-pw
              database: 3
              timeout: 75ms
              keyPrefix: prod-a
              followUpGather: 5ms
            pool:
              pollInterval: 500ms
              static:
                - id: spark-0
                  grpc: 10.0.0.5:15002
                  metricsUrl: http://10.0.0.5:4040
                  state: warming
                - id: spark-1
                  grpc: "[fd00::6]:15002"
                  state: draining
            probe:
              interval: 2s
              timeout: 800ms
              staleAfter: 10s
            sessions:
              idleTtl: 45m
              refreshEvery: 20s
              nearCacheMaxSize: 5000
              lostTtl: 2h
              releaseGrace: 5m
            placement:
              policy: seed
              utilisationWeight: 0.8
              sessionWeight: 0.2
              sessionCap: 40
              ewmaAlpha: 0.3
            admin:
              bindAddress: 0.0.0.0
              port: 9911
            """;

    private static RouterConfig parse(String yaml) {
        return ConfigLoader.parse(yaml, Map.of());
    }

    private static ConfigException rejected(String yaml) {
        return rejected(yaml, Map.of());
    }

    private static ConfigException rejected(String yaml, Map<String, String> env) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoader.parse(yaml, env));
        assertThat(e).as("expected a ConfigException for:\n" + yaml).isNotNull();
        return e;
    }

    @Test
    void fullFileParsesIntoTypedValues() {
        RouterConfig c = parse(FULL);

        assertThat(c.server()).isEqualTo(new RouterConfig.Server("127.0.0.1", 9100, Duration.ofMillis(120),
                Duration.ofSeconds(20), 2 << 20, false));
        assertThat(c.redis()).contains(new RouterConfig.Redis(RouterConfig.RedisMode.SENTINEL,
                List.of("redis://10.0.0.1:26379", "redis://10.0.0.2:26379"), "mymaster", "s3cret-pw", 3, "prod-a",
                new RouterConfig.StoreCalls(Duration.ofMillis(75), Duration.ofSeconds(5), 3, Duration.ofSeconds(1)),
                Duration.ofMillis(5)));
        assertThat(c.pool()).isEqualTo(new RouterConfig.Pool(Duration.ofMillis(500), List.of(
                new RouterConfig.StaticReplica("spark-0", "10.0.0.5:15002", "http://10.0.0.5:4040", ReplicaState.WARMING, "default"),
                new RouterConfig.StaticReplica("spark-1", "[fd00::6]:15002", null, ReplicaState.DRAINING, "default")), Duration.ofSeconds(5)));
        assertThat(c.probe()).isEqualTo(new RouterConfig.Probe(Duration.ofSeconds(2), Duration.ofMillis(800),
                Duration.ofSeconds(10)));
        assertThat(c.sessions()).isEqualTo(new RouterConfig.Sessions(Duration.ofMinutes(45), Duration.ofSeconds(20),
                5000, Duration.ofHours(2), Duration.ofMinutes(5)));
        assertThat(c.placement()).isEqualTo(new RouterConfig.Placement("seed", 0.8, 0.2, 40, 0.3));
        assertThat(c.admin()).isEqualTo(new RouterConfig.Admin("0.0.0.0", 9911));
    }

    @Test
    void absentSectionsTakeTheDocumentedDefaults() {
        RouterConfig c = parse(MINIMAL);

        assertThat(c.server()).isEqualTo(new RouterConfig.Server("0.0.0.0", 9002, Duration.ofMillis(150),
                Duration.ofSeconds(10), 1 << 20, true));
        assertThat(c.redis()).isEmpty();
        assertThat(c.pool()).isEqualTo(new RouterConfig.Pool(Duration.ofSeconds(1), List.of(
                new RouterConfig.StaticReplica("spark-0", "10.0.0.5:15002", null, ReplicaState.READY, "default")),
                Duration.ofSeconds(5)));
        assertThat(c.probe()).isEqualTo(new RouterConfig.Probe(Duration.ofSeconds(1), Duration.ofSeconds(1),
                Duration.ofSeconds(5)));
        assertThat(c.sessions()).isEqualTo(new RouterConfig.Sessions(Duration.ofMinutes(30), Duration.ofSeconds(30),
                1_000_000, Duration.ofHours(1), Duration.ofMinutes(10)));
        assertThat(c.placement()).isEqualTo(new RouterConfig.Placement(Policies.DEFAULT, 0.9, 0.1, 50, 0.5));
        // The operator endpoint stays on loopback unless moved on purpose.
        assertThat(c.admin().bindAddress()).isEqualTo("127.0.0.1");
    }

    @Test
    void followUpGatherMayBeZeroAndNoLongerThanTwentyMilliseconds() {
        assertThat(parse("redis: {address: redis://127.0.0.1:6379, followUpGather: 0ms}\n").redis().orElseThrow()
                .followUpGather()).as("0: each turn of the event loop sends what it gathered").isZero();
        assertThat(rejected("redis: {address: redis://127.0.0.1:6379, followUpGather: 21ms}\n"))
                .hasMessageContaining("redis.followUpGather").hasMessageContaining("between 0ms and 20ms");
        assertThat(rejected("redis: {address: redis://127.0.0.1:6379, followUpGather: soon}\n"))
                .hasMessageContaining("redis.followUpGather");
    }

    @Test
    void redisSectionDefaultsToSingleModeWithTightTimeout() {
        RouterConfig c = parse("redis: {address: redis://127.0.0.1:6379}\n");

        assertThat(c.redis()).contains(new RouterConfig.Redis(RouterConfig.RedisMode.SINGLE,
                List.of("redis://127.0.0.1:6379"), null, null, 0, "scr", new RouterConfig.StoreCalls(Duration.ofMillis(50), Duration.ofSeconds(5), 3, Duration.ofSeconds(1)),
                Duration.ofMillis(1)));
        // With Redis, the static list may be empty: replicas come from the instance store.
        assertThat(c.pool().staticReplicas()).isEmpty();
    }

    @Test
    void misspelledKeyIsRejectedByItsFullName() {
        ConfigException e = rejected(MINIMAL + "  polInterval: 2s\n");

        assertThat(e.key()).isEqualTo("pool.polInterval");
        assertThat(e.getMessage()).contains("pool.polInterval").contains("not a known setting");
    }

    @Test
    void misspelledTopLevelSectionAndNestedReplicaKeyAreRejected() {
        assertThat(rejected(MINIMAL + "sesions: {idleTtl: 5m}\n").key()).isEqualTo("sesions");
        assertThat(rejected(MINIMAL + "      metricUrl: http://10.0.0.5:4040\n").key())
                .isEqualTo("pool.static[0].metricUrl");
    }

    @Test
    void badDurationNamesItsKey() {
        ConfigException e = rejected(MINIMAL + "probe:\n  interval: 5 sec\n");

        assertThat(e.key()).isEqualTo("probe.interval");
        assertThat(e.getMessage()).contains("probe.interval").contains("5 sec");
    }

    @Test
    void durationOutsideItsRangeNamesItsKey() {
        // pool.pollInterval must be at least 50ms: a tighter loop would hammer Redis.
        ConfigException e = rejected(MINIMAL + "  pollInterval: 10ms\n");

        assertThat(e.key()).isEqualTo("pool.pollInterval");
        assertThat(e.getMessage()).contains("10ms");
    }

    @Test
    void portOutOfRangeIsRejected() {
        ConfigException high = rejected(MINIMAL + "server: {port: 65536}\n");
        assertThat(high.key()).isEqualTo("server.port");
        assertThat(high.getMessage()).contains("65536");

        assertThat(rejected(MINIMAL + "server: {port: -1}\n").key()).isEqualTo("server.port");
        assertThat(rejected(MINIMAL + "admin: {port: 70000}\n").key()).isEqualTo("admin.port");
        assertThat(rejected(MINIMAL + "server: {port: nine}\n").key()).isEqualTo("server.port");
    }

    @Test
    void portZeroAndMaxAreAccepted() {
        // 0 means "pick a free port" (tests) or "admin off"; 65535 is the largest real port.
        assertThat(parse(MINIMAL + "server: {port: 0}\n").server().port()).isZero();
        assertThat(parse(MINIMAL + "server: {port: 65535}\n").server().port()).isEqualTo(65535);
    }

    @Test
    void unknownPolicyNameListsTheKnownOnes() {
        ConfigException e = rejected(MINIMAL + "placement: {policy: round-robin}\n");

        assertThat(e.key()).isEqualTo("placement.policy");
        assertThat(e.getMessage()).contains("round-robin").contains("seed");
    }

    @Test
    void sentinelModeWithoutMasterNameIsRejected() {
        ConfigException e = rejected("""
                redis:
                  mode: sentinel
                  addresses: [redis://10.0.0.1:26379]
                """);

        assertThat(e.key()).isEqualTo("redis.masterName");
    }

    @Test
    void unknownRedisModeIsRejected() {
        assertThat(rejected("redis: {mode: replicated, address: redis://10.0.0.1:6379}\n").key())
                .isEqualTo("redis.mode");
    }

    @Test
    void redisAddressWithoutSchemeIsRejected() {
        ConfigException e = rejected("redis: {address: 10.0.0.1:6379}\n");

        assertThat(e.key()).isEqualTo("redis.address");
        assertThat(e.getMessage()).contains("redis://").contains("10.0.0.1:6379");
    }

    @Test
    void redisSectionWithoutAnyAddressIsRejected() {
        assertThat(rejected("redis: {timeout: 50ms}\n").key()).isEqualTo("redis.address");
    }

    @Test
    void redisKeyPrefixWithSeparatorCharactersIsRejected() {
        // A ':' or space in the prefix would make keys of two deployments collide or be hard to scan.
        assertThat(rejected("redis: {address: redis://10.0.0.1:6379, keyPrefix: 'a:b'}\n").key())
                .isEqualTo("redis.keyPrefix");
    }

    @Test
    void emptyPoolWithoutRedisNamesPoolStatic() {
        ConfigException e = rejected("server: {port: 9002}\n");

        assertThat(e.key()).isEqualTo("pool.static");
        assertThat(e.getMessage()).contains("redis");
    }

    @Test
    void emptyFileIsRejectedForHavingNoReplica() {
        assertThat(rejected("").key()).isEqualTo("pool.static");
    }

    @Test
    void staticReplicaWithHostnameAddressIsRejected() {
        // ORIGINAL_DST does no DNS: a hostname here could never be routed to.
        ConfigException e = rejected("""
                pool:
                  static:
                    - id: spark-0
                      grpc: spark-0:15002
                """);

        assertThat(e.key()).isEqualTo("pool.static[0].grpc");
        assertThat(e.getMessage()).contains("spark-0:15002");
    }

    @Test
    void staticReplicaErrorsNameTheEntryIndex() {
        String second = MINIMAL + """
                    - id: spark-1
                      grpc: 10.0.0.6:15002
                      state: starting
                """;
        assertThat(rejected(second).key()).isEqualTo("pool.static[1].state");

        assertThat(rejected("pool: {static: [{id: 'bad id', grpc: '10.0.0.5:1'}]}\n").key())
                .isEqualTo("pool.static[0].id");
        assertThat(rejected("pool: {static: [{grpc: '10.0.0.5:1'}]}\n").key()).isEqualTo("pool.static[0].id");
        assertThat(rejected("pool: {static: [{id: a, grpc: '10.0.0.5:1', metricsUrl: '10.0.0.5:4040'}]}\n").key())
                .isEqualTo("pool.static[0].metricsUrl");
    }

    @Test
    void duplicateReplicaIdsAreRejected() {
        ConfigException e = rejected("""
                pool:
                  static:
                    - id: spark-0
                      grpc: 10.0.0.5:15002
                    - id: spark-0
                      grpc: 10.0.0.6:15002
                """);

        assertThat(e.key()).isEqualTo("pool.static[1].id");
        assertThat(e.getMessage()).contains("spark-0");
    }

    @Test
    void secondSectionOfTheSameNameIsRejectedInsteadOfReplacingTheFirst() {
        // The reported case: the first server block's port and deadline would silently vanish.
        ConfigException e = rejected(MINIMAL + """
                server:
                  port: 9100
                  decisionDeadline: 120ms
                admin:
                  port: 9901
                server:
                  drainPeriod: 20s
                """);

        assertThat(e.key()).isEqualTo("server");
        assertThat(e.getMessage()).contains("appears twice", "line 10");
    }

    @Test
    void duplicateKeyInsideASectionIsRejectedByItsFullName() {
        ConfigException e = rejected(MINIMAL + """
                redis:
                  address: redis://10.0.0.2:6379
                  timeout: 50ms
                  timeout: 5s
                """);

        assertThat(e.key()).isEqualTo("redis.timeout");
    }

    @Test
    void duplicateKeyInsideAListEntryNamesTheEntry() {
        ConfigException e = rejected("""
                pool:
                  static:
                    - id: spark-0
                      grpc: 10.0.0.5:15002
                    - id: spark-1
                      grpc: 10.0.0.6:15002
                      grpc: 10.0.0.7:15002
                """);

        assertThat(e.key()).isEqualTo("pool.static[1].grpc");
    }

    @Test
    void environmentOverridesWinOverTheFile() {
        RouterConfig c = ConfigLoader.parse(FULL, Map.of(
                "SCROUTER_PORT", "9300",
                "SCROUTER_REDIS_ADDRESS", "redis://10.9.9.9:26379",
                "SCROUTER_REDIS_PASSWORD", "from-env"));

        assertThat(c.server().port()).isEqualTo(9300);
        assertThat(c.redis()).get().extracting(RouterConfig.Redis::password).isEqualTo("from-env");
        // The override comes first; the file's sentinel list follows it.
        assertThat(c.redis().get().addresses()).first().isEqualTo("redis://10.9.9.9:26379");
    }

    @Test
    void environmentCanCreateTheRedisSection() {
        RouterConfig c = ConfigLoader.parse(MINIMAL, Map.of(
                "SCROUTER_REDIS_ADDRESS", "redis://10.9.9.9:6379",
                "SCROUTER_REDIS_PASSWORD", "pw"));

        assertThat(c.redis()).contains(new RouterConfig.Redis(RouterConfig.RedisMode.SINGLE,
                List.of("redis://10.9.9.9:6379"), null, "pw", 0, "scr", new RouterConfig.StoreCalls(Duration.ofMillis(50), Duration.ofSeconds(5), 3, Duration.ofSeconds(1)),
                Duration.ofMillis(1)));
    }

    @Test
    void environmentPolicyOverrideIsValidatedAndWins() {
        // A bad policy in the environment is caught under the key it overrides...
        ConfigException e = rejected(MINIMAL + "placement: {policy: seed}\n", Map.of("SCROUTER_POLICY", "fastest"));
        assertThat(e.key()).isEqualTo("placement.policy");
        assertThat(e.getMessage()).contains("fastest");

        // ...and a good one replaces a bad value in the file.
        RouterConfig c = ConfigLoader.parse(MINIMAL + "placement: {policy: fastest}\n",
                Map.of("SCROUTER_POLICY", "seed"));
        assertThat(c.placement().policy()).isEqualTo("seed");
    }

    @Test
    void environmentPortOutOfRangeIsRejectedUnderItsConfigKey() {
        assertThat(rejected(MINIMAL, Map.of("SCROUTER_PORT", "70000")).key()).isEqualTo("server.port");
    }

    @Test
    void emptyEnvironmentValuesAreIgnored() {
        RouterConfig c = ConfigLoader.parse(MINIMAL, Map.of("SCROUTER_PORT", "", "SCROUTER_REDIS_ADDRESS", ""));

        assertThat(c.server().port()).isEqualTo(9002);
        assertThat(c.redis()).isEmpty();
    }

    @Test
    void redisPasswordNeverAppearsInToString() {
        RouterConfig c = parse(FULL);

        assertThat(c.redis().get().toString()).doesNotContain("s3cret-pw").contains("***");
        assertThat(c.toString()).doesNotContain("s3cret-pw");
    }

    @Test
    void staleAfterShorterThanProbeIntervalIsRejected() {
        ConfigException e = rejected(MINIMAL + "probe: {interval: 2s, staleAfter: 1s}\n");

        assertThat(e.key()).isEqualTo("probe.staleAfter");
    }

    @Test
    void staleAfterEqualToProbeIntervalIsAccepted() {
        assertThat(parse(MINIMAL + "probe: {interval: 2s, staleAfter: 2s}\n").probe().staleAfter())
                .isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void refreshEveryNotShorterThanIdleTtlIsRejected() {
        assertThat(rejected(MINIMAL + "sessions: {idleTtl: 1m, refreshEvery: 1m}\n").key())
                .isEqualTo("sessions.refreshEvery");
        assertThat(rejected(MINIMAL + "sessions: {idleTtl: 1m, refreshEvery: 2m}\n").key())
                .isEqualTo("sessions.refreshEvery");
        assertThat(parse(MINIMAL + "sessions: {idleTtl: 1m, refreshEvery: 59s}\n").sessions().refreshEvery())
                .isEqualTo(Duration.ofSeconds(59));
    }

    @Test
    void bothPlacementWeightsZeroIsRejected() {
        assertThat(rejected(MINIMAL + "placement: {utilisationWeight: 0, sessionWeight: 0}\n").key())
                .isEqualTo("placement.sessionWeight");
    }

    @Test
    void malformedYamlAndNonMappingRootAreRejected() {
        assertThat(rejected("server: [unclosed\n").key()).isEqualTo("(file)");
        assertThat(rejected("- just\n- a list\n").key()).isEqualTo("(root)");
        assertThat(rejected(MINIMAL + "server: 9002\n").key()).isEqualTo("server");
    }

    @Test
    void loadReadsAFileAndReportsAMissingOne(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("router.yaml");
        Files.writeString(file, MINIMAL + "server: {port: 9444}\n");
        assertThat(ConfigLoader.load(file, Map.of()).server().port()).isEqualTo(9444);

        assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("absent.yaml"), Map.of()))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.key()).isEqualTo("--config"));
    }

    @Test
    void embeddedDefaultHasTwoReadyStaticReplicasAndNoRedis() throws Exception {
        String yaml;
        try (InputStream in = ConfigLoader.class.getResourceAsStream("/default-config.yaml")) {
            assertThat(in).as("/default-config.yaml on the classpath").isNotNull();
            yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }

        RouterConfig c = ConfigLoader.parse(yaml, Map.of());

        assertThat(c.redis()).isEqualTo(Optional.empty());
        assertThat(c.pool().staticReplicas()).hasSize(2)
                .allSatisfy(r -> assertThat(r.state()).isEqualTo(ReplicaState.READY))
                .extracting(RouterConfig.StaticReplica::id).doesNotHaveDuplicates();
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"99999999999999999999ms", "9999999999999999h"})
    void absurdlyLargeDurationNamesItsKeyInsteadOfCrashing(String value) {
        // Regression: these escaped as NumberFormatException / ArithmeticException, without the key.
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConfigLoader.parse(
                        "probe: {interval: " + value + "}\npool: {static: [{id: a, grpc: \"10.0.0.1:1\"}]}",
                        java.util.Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("probe.interval");
    }

    @org.junit.jupiter.api.Test
    void absurdlyLargeNumberFromTheEnvironmentNamesItsKey() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConfigLoader.parse(
                        "pool: {static: [{id: a, grpc: \"10.0.0.1:1\"}]}",
                        java.util.Map.of("SCROUTER_PORT", "99999999999999999999")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server.port");
    }
}
