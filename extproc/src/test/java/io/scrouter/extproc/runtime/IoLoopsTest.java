package io.scrouter.extproc.runtime;

import io.netty.channel.epoll.Epoll;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.redis.RedisClients;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The router's event loops run Netty's native epoll transport on Linux, and its Redis client works on loops of
 * either transport: the client must open channels of the loops' kind, or every Redis call fails.
 */
class IoLoopsTest {

    @Test
    void theNativeLibraryShipsForBothLinuxArchitectures() {
        for (String arch : new String[] {"x86_64", "aarch_64"}) {
            assertThat(getClass().getClassLoader()
                    .getResource("META-INF/native/libnetty_transport_native_epoll_" + arch + ".so"))
                    .as("Netty's epoll library for %s on the classpath", arch).isNotNull();
        }
    }

    @Test
    void onLinuxTheLoopsRunTheNativeTransportWhereItLoads() {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "epoll exists only on Linux");
        assumeTrue(Epoll.isAvailable(), () -> "Netty's epoll library did not load here, so the loops run the JDK's "
                + "transport: " + Epoll.unavailabilityCause());
        try (IoLoops loops = IoLoops.perProcessor()) {
            assertThat(loops.transport()).isEqualTo("epoll");
        }
        try (IoLoops loops = IoLoops.perProcessorOnJdkTransport()) {
            assertThat(loops.transport()).isEqualTo("nio");
        }
    }

    @Test
    void theRedisClientAnswersOnLoopsOfEitherTransport() throws Exception {
        assumeTrue(RedisProcess.installed(), "needs redis-server: run `bash .ci/run` or `apt-get install -y redis-server`");
        try (RedisProcess redis = RedisProcess.start()) {
            var settings = ConfigLoader.parse("redis: {address: \"" + redis.address() + "\"}", Map.of())
                    .redis().orElseThrow();
            long bound = Patience.of(Duration.ofSeconds(5)).toMillis();
            for (boolean jdk : new boolean[] {false, true}) {
                try (IoLoops loops = jdk ? IoLoops.perProcessorOnJdkTransport() : IoLoops.perProcessor()) {
                    RedissonClient client = RedisClients.create(settings, loops.group());
                    try {
                        String key = "transport:" + loops.transport();
                        client.getBucket(key, StringCodec.INSTANCE).setAsync(loops.transport())
                                .toCompletableFuture().get(bound, TimeUnit.MILLISECONDS);
                        assertThat(redis.command("GET", key)).as("written over %s", loops.transport())
                                .isEqualTo(loops.transport());
                    } finally {
                        client.shutdown();
                    }
                }
            }
        }
    }
}
