package io.scrouter.extproc.redis;

import io.scrouter.extproc.config.RouterConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.BaseConfig;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;

/**
 * Builds the Redisson client with deadlines that suit a request path, for each {@code redis.mode}.
 *
 * <p>Redisson's defaults (3 s timeout, several retries with back-off) can hold a call for tens of seconds
 * when Redis hangs; Envoy waits at most its ext_proc message timeout (200 ms by default). So: one attempt,
 * the configured timeout, and lazy connection so the router starts (and serves from its fallback) even
 * while Redis is down.
 */
public final class RedisClients {

    /**
     * How often a cluster client re-reads the slot map. Redisson's default is 5 s; until it re-reads, every
     * call for the slots of a master that failed over still goes to the dead master and fails, although the
     * cluster promoted its replica. Measured in {@code RedisClusterTest} (4 interleaved runs each): the
     * router's client reached the promoted replica 1.0-4.0 s after the failover with 5 s, 0.2-1.0 s with 1 s.
     */
    static final int CLUSTER_SCAN_MILLIS = 1000;

    private RedisClients() {
    }

    public static RedissonClient create(RouterConfig.Redis settings) {
        Config config = new Config();
        config.setCodec(StringCodec.INSTANCE);
        config.setLazyInitialization(true);
        // EVALSHA instead of sending each script's text on every call: the scripts run on the request path.
        config.setUseScriptCache(true);
        config.setNettyThreads(4);
        config.setThreads(2);
        int timeout = (int) settings.timeout().toMillis();
        switch (settings.mode()) {
            case "sentinel" -> {
                var s = config.useSentinelServers().setMasterName(settings.masterName()).setDatabase(settings.database());
                settings.addresses().forEach(s::addSentinelAddress);
                s.setCheckSentinelsList(false);
                // Reads go to the master too (Redisson reads from replicas by default): a replica is there to take
                // over, and a hung one must not stall pool reads, counts and the binding feed until Sentinel
                // declares it down (down-after-milliseconds, 30 s by default).
                s.setReadMode(ReadMode.MASTER);
                tune(s, settings, timeout);
            }
            case "cluster" -> {
                var c = config.useClusterServers();
                settings.addresses().forEach(c::addNodeAddress);
                // Reads on the masters, as for Sentinel: a replica hung or lagging must not decide what routers see.
                c.setReadMode(ReadMode.MASTER);
                c.setScanInterval(CLUSTER_SCAN_MILLIS);
                tune(c, settings, timeout);
            }
            default -> tune(config.useSingleServer().setAddress(settings.addresses().get(0))
                    .setDatabase(settings.database()).setConnectionMinimumIdleSize(8).setConnectionPoolSize(64),
                    settings, timeout);
        }
        return Redisson.create(config);
    }

    private static void tune(BaseConfig<?> c, RouterConfig.Redis settings, int timeout) {
        c.setTimeout(timeout);
        c.setConnectTimeout(Math.max(timeout, 1000));
        c.setRetryAttempts(0);
        c.setPingConnectionInterval(1000);
        if (settings.password() != null) {
            c.setPassword(settings.password());
        }
    }
}
