package io.scrouter.extproc.redis;

import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.ConfigLoader;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redis settings that cannot work with the chosen {@code redis.mode} stop the router at start with the key
 * to fix, instead of starting and failing on every call. Both mistakes were seen against real servers (see
 * {@link RedisClusterTest}): a cluster's seed nodes under the default single mode start a router whose every
 * call fails with "MOVED redirection loop detected"; a database other than 0 in cluster mode was silently
 * ignored.
 */
class RedisModeSettingsTest {

    private static ConfigException rejected(String redisSection) {
        return org.assertj.core.api.Assertions.catchThrowableOfType(ConfigException.class,
                () -> ConfigLoader.parse(redisSection + "\n", Map.of()));
    }

    @Test
    void severalAddressesUnderSingleModeAreRejected() {
        ConfigException e = rejected("redis: {addresses: [\"redis://10.0.0.1:6379\", \"redis://10.0.0.2:6379\"]}");

        assertThat(e.key()).isEqualTo("redis.mode");
        assertThat(e.getMessage()).contains("2 are listed").contains("cluster").contains("sentinel");
    }

    @Test
    void aDatabaseOtherThanZeroInClusterModeIsRejected() {
        ConfigException e = rejected("redis: {mode: cluster, addresses: [\"redis://10.0.0.1:6379\"], database: 3}");

        assertThat(e.key()).isEqualTo("redis.database");
        assertThat(e.getMessage()).contains("cluster").contains("3");
    }

    @Test
    void theSameSettingsAreAcceptedWhereTheyWork() {
        assertThat(ConfigLoader.parse("redis: {mode: cluster, addresses: [\"redis://10.0.0.1:6379\", "
                + "\"redis://10.0.0.2:6379\"]}\n", Map.of()).redis().orElseThrow().addresses()).hasSize(2);
        assertThat(ConfigLoader.parse("redis: {mode: sentinel, masterName: m, database: 3, addresses: "
                + "[\"redis://10.0.0.1:26379\", \"redis://10.0.0.2:26379\"]}\n", Map.of()).redis().orElseThrow()
                .database()).isEqualTo(3);
        assertThat(ConfigLoader.parse("redis: {address: \"redis://10.0.0.1:6379\", database: 3}\n", Map.of())
                .redis().orElseThrow().database()).isEqualTo(3);
    }
}
