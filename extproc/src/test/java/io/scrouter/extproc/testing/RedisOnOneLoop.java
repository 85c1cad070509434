package io.scrouter.extproc.testing;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.redis.RedisClients;
import io.scrouter.testkit.redis.RedisProcess;
import org.redisson.api.RedissonClient;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real {@code redis-server} and the router's Redisson client on one Netty event loop, as a router limited to one
 * CPU runs them: for tests of what the loop does while it is held up.
 */
public final class RedisOnOneLoop implements AutoCloseable {

    private final RedisProcess redis;
    private final MultiThreadIoEventLoopGroup group;
    private final RedissonClient client;

    private RedisOnOneLoop(RedisProcess redis, MultiThreadIoEventLoopGroup group, RedissonClient client) {
        this.redis = redis;
        this.group = group;
        this.client = client;
    }

    /** Skips the test without a {@code redis-server}; the client has {@code redis.timeout} set to {@code timeoutMillis}. */
    public static RedisOnOneLoop start(long timeoutMillis) throws Exception {
        assumeTrue(RedisProcess.installed(), "needs redis-server: run `bash .ci/run` or `apt-get install -y redis-server`");
        RedisProcess redis = RedisProcess.start();
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        RouterConfig config = ConfigLoader.parse("redis: {address: \"" + redis.address() + "\", timeout: "
                + timeoutMillis + "ms}", Map.of());
        return new RedisOnOneLoop(redis, group, RedisClients.create(config.redis().orElseThrow(), group));
    }

    public RedisProcess redis() {
        return redis;
    }

    public MultiThreadIoEventLoopGroup group() {
        return group;
    }

    public RedissonClient client() {
        return client;
    }

    @Override
    public void close() throws Exception {
        client.shutdown();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        redis.close();
    }
}
