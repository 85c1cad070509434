package io.scrouter.extproc.redis;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.testkit.redis.LoopbackCertificate;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Routers over a real password-protected {@code redis-server} ({@code --requirepass}) that also serves TLS
 * on a second port: the right password routes (plain and {@code rediss://}), a wrong or missing one stops the
 * router at start with an error naming {@code redis.password}, and never with the password in it.
 */
class ProtectedRedisTest {

    private static final String PASSWORD = "s3cret-only-for-this-test";
    private static RedisProcess redis;
    private static int tlsPort;
    private static String tlsUnsupported;
    private static LoopbackCertificate certificate;

    @BeforeAll
    static void startRedis() throws Exception {
        assumeTrue(RedisProcess.installed(), "skipped: no redis-server binary (these tests start a real Redis); "
                + "install the Debian package redis-server, as bin/test does");
        certificate = LoopbackCertificate.create(Files.createTempDirectory("redis-tls"));
        tlsPort = RedisProcess.freePort();
        try {
            redis = RedisProcess.startProtected(PASSWORD, certificate.redisServerArgs(tlsPort).toArray(String[]::new));
        } catch (IOException e) {
            // A redis-server built without TLS refuses the tls-* options: then only the password is tested.
            if (!e.getMessage().toLowerCase(java.util.Locale.ROOT).contains("tls")) {
                throw e;
            }
            tlsUnsupported = e.getMessage();
            redis = RedisProcess.startProtected(PASSWORD);
        }
    }

    @AfterAll
    static void stopRedis() throws Exception {
        if (redis != null) {
            redis.close();
        }
    }

    @BeforeEach
    void empty() throws Exception {
        redis.reply("FLUSHALL");
    }

    private static String section(String address, String passwordEntry) {
        return "redis: {address: \"" + address + "\"" + passwordEntry + ", timeout: 250ms, keyPrefix: "
                + TopologyRig.PREFIX + "}";
    }

    private static TopologyRig rig(String address) throws Exception {
        return new TopologyRig(section(address, ", password: \"" + PASSWORD + "\""),
                key -> (String) redis.reply("GET", key));
    }

    @Test
    void rightPasswordRoutesAndTwoRoutersAgree() throws Exception {
        try (TopologyRig rig = rig(redis.address())) {
            new RoutingChecks(rig, rig.startRouter(), rig.startRouter()).all();
            assertNewSessionsWentOutOnThePipelinedConnection();
        }
    }

    /**
     * The routers' new sessions went out on their pipelined connections ({@code PipelinedConnection}), which
     * authenticated (and, over TLS, shook hands) on their own: Redis lists them by name, last busy with a new
     * session's SET or a follow-up batch.
     */
    private static void assertNewSessionsWentOutOnThePipelinedConnection() throws Exception {
        java.util.List<String> named = java.util.Arrays.stream(String.valueOf(redis.reply("CLIENT", "LIST"))
                        .split("\r?\n"))
                .filter(line -> line.contains(" name=" + PipelinedConnection.CLIENT_NAME + " ")).toList();
        assertThat(named).as("the routers' pipelined connections in CLIENT LIST").isNotEmpty()
                .anyMatch(line -> line.contains(" cmd=set ") || line.contains(" cmd=evalsha "));
    }

    @Test
    void wrongPasswordStopsTheRouterAtStartNamingTheKey() {
        RouterConfig config = ConfigLoader.parse("server: {bindAddress: 127.0.0.1, port: 0}\n"
                + section(redis.address(), ", password: not-the-password") + "\n" + TopologyRig.ROUTER_YAML, Map.of());
        assertThatThrownBy(() -> RouterServer.start(config).close())
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo("redis.password"))
                .hasMessageContaining("refused")
                .hasMessageNotContaining("not-the-password");
    }

    @Test
    void missingPasswordStopsTheRouterAtStartNamingTheKey() {
        RouterConfig config = ConfigLoader.parse("server: {bindAddress: 127.0.0.1, port: 0}\n"
                + section(redis.address(), "") + "\n" + TopologyRig.ROUTER_YAML, Map.of());
        assertThatThrownBy(() -> RouterServer.start(config).close())
                .isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo("redis.password"))
                .hasMessageContaining("requires")
                .hasMessageNotContaining(PASSWORD);
    }

    @Test
    void passwordForARedisWithoutOneStopsTheRouterAtStartNamingTheKey() throws Exception {
        try (RedisProcess open = RedisProcess.start()) {
            RouterConfig config = ConfigLoader.parse("server: {bindAddress: 127.0.0.1, port: 0}\n"
                    + section(open.address(), ", password: \"" + PASSWORD + "\"") + "\n" + TopologyRig.ROUTER_YAML,
                    Map.of());
            assertThatThrownBy(() -> RouterServer.start(config).close())
                    .isInstanceOf(ConfigException.class)
                    .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo("redis.password"))
                    .hasMessageContaining("has no password")
                    .hasMessageNotContaining(PASSWORD);
        }
    }

    /**
     * {@code rediss://}: the router trusts Redis's certificate through the JVM's trust store
     * ({@code javax.net.ssl.trustStore}, as an operator sets it with {@code JAVA_TOOL_OPTIONS}); the
     * certificate names 127.0.0.1, so hostname verification is on and passes.
     */
    @Test
    void tlsWithTheRightPasswordRoutesAndTwoRoutersAgree() throws Exception {
        assumeTrue(tlsUnsupported == null, () -> "skipped: this redis-server has no TLS support (" + tlsUnsupported + ")");
        Map<String, String> saved = new java.util.HashMap<>();
        for (String p : java.util.List.of("javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword",
                "javax.net.ssl.trustStoreType")) {
            saved.put(p, System.getProperty(p));
        }
        System.setProperty("javax.net.ssl.trustStore", certificate.trustStore().toString());
        System.setProperty("javax.net.ssl.trustStorePassword", certificate.trustStorePassword());
        System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
        try (TopologyRig rig = rig("rediss://127.0.0.1:" + tlsPort)) {
            RoutingChecks checks = new RoutingChecks(rig, rig.startRouter(), rig.startRouter());
            checks.poolComesFromTheInstanceStore();
            checks.newSessionIsPlacedAndBoundInRedis();
            checks.routersAgreeOnSimultaneousNewSessions();
            assertNewSessionsWentOutOnThePipelinedConnection();
            // The routers reached Redis over TLS only: the TLS port speaks nothing else, and the plain one is
            // not in their configuration.
            assertThat(rig.redisSettings().addresses()).containsExactly("rediss://127.0.0.1:" + tlsPort);
        } finally {
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }
}
