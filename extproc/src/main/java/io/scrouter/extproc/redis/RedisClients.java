package io.scrouter.extproc.redis;

import io.scrouter.extproc.config.RouterConfig;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.BaseConfig;
import org.redisson.config.Config;

/**
 * Builds the Redisson client with deadlines that suit a request path.
 *
 * <p>Redisson's defaults (3 s timeout, several retries with back-off) can hold a call for tens of seconds
 * when Redis hangs; Envoy waits at most its ext_proc message timeout (200 ms by default). So: one attempt,
 * the configured timeout, and lazy connection so the router starts (and serves from its fallback) even
 * while Redis is down.
 */
public final class RedisClients {

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
                tune(s, settings, timeout);
            }
            case "cluster" -> {
                var c = config.useClusterServers();
                settings.addresses().forEach(c::addNodeAddress);
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
