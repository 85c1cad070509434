package io.scrouter.extproc.publisher;

import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.Durations;
import io.scrouter.extproc.config.RouterConfig;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.scrouter.extproc.pool.RedisInstanceStore;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisClients;
import io.scrouter.extproc.redis.RedisKeys;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code publish} subcommand: the replica publisher sidecar.
 *
 * <pre>
 * java -jar extproc-all.jar publish --id spark-0 --grpc 10.0.0.5:15002 --metrics-url http://10.0.0.5:4040 \
 *     [--config FILE] [--ttl 10s] [--interval 2s] [--drain-for 30s] [--metrics-port 9091]
 * </pre>
 * Redis comes from the config file's {@code redis} section or {@code SCROUTER_REDIS_ADDRESS} /
 * {@code SCROUTER_REDIS_PASSWORD}. Every flag also reads from {@code SCROUTER_REPLICA_<FLAG>} (for example
 * {@code SCROUTER_REPLICA_GRPC}), which suits a Kubernetes sidecar that composes the address from the pod IP.
 */
public final class PublisherCommand {

    private static final Logger LOG = LoggerFactory.getLogger(PublisherCommand.class);

    private PublisherCommand() {
    }

    public static void run(String[] args, Map<String, String> env) throws Exception {
        Map<String, String> flags = parse(args, env);
        String id = required(flags, "id");
        String grpc = required(flags, "grpc");
        String metricsUrl = required(flags, "metrics-url");
        Duration ttl = Durations.parse("--ttl", flags.getOrDefault("ttl", "10s"));
        Duration interval = Durations.parse("--interval", flags.getOrDefault("interval", "2s"));
        Duration drainFor = Durations.parse("--drain-for", flags.getOrDefault("drain-for", "30s"));
        if (interval.multipliedBy(2).compareTo(ttl) > 0) {
            throw new ConfigException("--ttl", "must be at least twice --interval (" + interval.toMillis()
                    + "ms), or a single late renewal would make the replica vanish");
        }
        RouterConfig.Redis redis = redisSettings(flags.get("config"), env);
        RedissonClient client = RedisClients.create(redis);
        RedisInstanceStore store = new RedisInstanceStore(client, new RedisKeys(redis.keyPrefix()));
        SparkReadiness readiness = new SparkReadiness(grpc, metricsUrl, Duration.ofSeconds(1));
        ReplicaPublisher publisher = new ReplicaPublisher(store, id, grpc, metricsUrl, ttl, readiness);
        PublisherMetrics metrics = new PublisherMetrics(id, ttl, interval);
        HTTPServer metricsServer = flags.containsKey("metrics-port")
                ? HTTPServer.builder().port(port(flags.get("metrics-port"))).registry(metrics.registry()).buildAndStart()
                : null;

        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch drained = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            publisher.drain();
            stop.countDown();
            try {
                // Keep renewing as draining so routers stop placing here while sessions finish; then let it expire.
                drained.await(drainFor.toMillis() + 5_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "scrouter-publisher-drain"));

        LOG.atInfo().setMessage("publishing").addKeyValue("replica", id).addKeyValue("grpc", grpc)
                .addKeyValue("metricsUrl", metricsUrl).addKeyValue("ttlMillis", ttl.toMillis())
                .addKeyValue("intervalMillis", interval.toMillis()).log();
        Runnable renew = () -> {
            try {
                ReplicaState published = publisher.tick().get(interval.toMillis() + 2_000, TimeUnit.MILLISECONDS);
                metrics.renewed(published, System.currentTimeMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                metrics.renewalFailed();
                LOG.atWarn().setMessage("renewal failed; retrying after the interval. If this lasts longer than the "
                        + "ttl, routers drop the replica").addKeyValue("replica", id)
                        .addKeyValue("error", e.toString()).addKeyValue("intervalMillis", interval.toMillis())
                        .addKeyValue("ttlMillis", ttl.toMillis()).log();
            }
        };
        new RenewalSchedule(renew, interval, drainFor, System::nanoTime, RenewalSchedule.onLatch(stop)).run();
        LOG.atInfo().setMessage("drained; no longer renewing, the entry expires within the ttl")
                .addKeyValue("replica", id).addKeyValue("drainForMillis", drainFor.toMillis())
                .addKeyValue("ttlMillis", ttl.toMillis()).log();
        readiness.close();
        client.shutdown();
        if (metricsServer != null) {
            metricsServer.close();
        }
        drained.countDown();
    }

    private static RouterConfig.Redis redisSettings(String configFile, Map<String, String> env) {
        RouterConfig config = configFile != null ? ConfigLoader.load(Path.of(configFile), env)
                : ConfigLoader.parse("", withPlaceholderPool(env));
        return config.redis().orElseThrow(() -> new ConfigException("redis.address",
                "is required by the publisher: set SCROUTER_REDIS_ADDRESS or a redis section in --config"));
    }

    /** Without a file, the loader needs either Redis or a pool; Redis is what the publisher needs anyway. */
    private static Map<String, String> withPlaceholderPool(Map<String, String> env) {
        if (env.get("SCROUTER_REDIS_ADDRESS") == null) {
            throw new ConfigException("redis.address",
                    "is required by the publisher: set SCROUTER_REDIS_ADDRESS or pass --config with a redis section");
        }
        return env;
    }

    static Map<String, String> parse(String[] args, Map<String, String> env) {
        Map<String, String> flags = new HashMap<>();
        for (String name : new String[] {"id", "grpc", "metrics-url", "ttl", "interval", "drain-for", "config",
                "metrics-port"}) {
            String fromEnv = env.get("SCROUTER_REPLICA_" + name.toUpperCase().replace('-', '_'));
            if (fromEnv != null && !fromEnv.isBlank()) {
                flags.put(name, fromEnv);
            }
        }
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || i + 1 >= args.length) {
                throw new ConfigException(a, "is not understood; usage: publish --id ID --grpc IP:PORT "
                        + "--metrics-url URL [--config FILE] [--ttl 10s] [--interval 2s] [--drain-for 30s] [--metrics-port PORT]");
            }
            flags.put(a.substring(2), args[++i]);
        }
        return flags;
    }

    private static int port(String value) {
        try {
            int port = Integer.parseInt(value);
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ConfigException("--metrics-port", "must be a port number (0-65535), got '" + value + "'");
    }

    private static String required(Map<String, String> flags, String name) {
        String v = flags.get(name);
        if (v == null || v.isBlank()) {
            throw new ConfigException("--" + name, "is required (or SCROUTER_REPLICA_"
                    + name.toUpperCase().replace('-', '_') + ")");
        }
        return v;
    }
}
