package io.scrouter.extproc.publisher;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.scrouter.extproc.cli.Converters.DurationValue;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisClients;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code publish}: the replica publisher sidecar. Redis comes from the config file's {@code redis} section or
 * {@code SCROUTER_REDIS_ADDRESS} / {@code SCROUTER_REDIS_PASSWORD}. Every option also reads
 * {@code SCROUTER_REPLICA_<OPTION>} (for example {@code SCROUTER_REPLICA_GRPC}), which suits a Kubernetes sidecar
 * that composes the address from the pod IP.
 */
@Command(name = "publish", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        description = "Publish one Spark Connect replica to the routers, with its readiness, until SIGTERM; then "
                + "publish it as draining for --drain-for and let the entry expire.",
        footer = "%nEvery option also reads SCROUTER_REPLICA_<OPTION>, for example SCROUTER_REPLICA_GRPC. Redis: "
                + "--config's redis section, or SCROUTER_REDIS_ADDRESS and SCROUTER_REDIS_PASSWORD.")
public final class PublisherCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(PublisherCommand.class);

    @Option(names = "--id", required = true, paramLabel = "ID",
            description = "The replica's id, stable across restarts (a StatefulSet pod name).")
    String id;

    @Option(names = "--grpc", required = true, paramLabel = "HOST:PORT",
            description = "Where Envoy reaches the replica's Spark Connect server.")
    String grpc;

    @Option(names = "--metrics-url", required = true, paramLabel = "URL",
            description = "The driver's Spark UI, for its REST API (for example http://10.0.0.5:4040).")
    String metricsUrl;

    @Option(names = "--group", paramLabel = "NAME", defaultValue = Replica.DEFAULT_GROUP,
            description = "The replica group it serves, such as team-a or shared (default: ${DEFAULT-VALUE}); the "
                    + "routers' groups section says which requests may use it.")
    String group;

    @Option(names = "--config", paramLabel = "FILE", description = "Router configuration whose redis section to use.")
    Path config;

    @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "10s", converter = DurationValue.class,
            description = "Routers drop the replica this long after the last renewal (default: ${DEFAULT-VALUE}).")
    Duration ttl;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "2s", converter = DurationValue.class,
            description = "Time between renewals; at most half of --ttl (default: ${DEFAULT-VALUE}).")
    Duration interval;

    @Option(names = "--drain-for", paramLabel = "DURATION", defaultValue = "30s", converter = DurationValue.class,
            description = "After SIGTERM, publish draining this long (default: ${DEFAULT-VALUE}).")
    Duration drainFor;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve Prometheus metrics on this port (default: none).")
    Integer metricsPort;

    private final Map<String, String> env;

    public PublisherCommand(Map<String, String> env) {
        this.env = env;
    }

    @Override
    public Integer call() throws Exception {
        if (interval.multipliedBy(2).compareTo(ttl) > 0) {
            throw new ConfigException("--ttl", "must be at least twice --interval (" + interval.toMillis()
                    + "ms), or a single late renewal would make the replica vanish");
        }
        if (metricsPort != null && (metricsPort < 0 || metricsPort > 65535)) {
            throw new ConfigException("--metrics-port", "must be a port number (0-65535), got " + metricsPort);
        }
        RouterConfig.Redis redis = redisSettings();
        RedissonClient client = RedisClients.create(redis);
        RedisInstanceStore store = new RedisInstanceStore(client, new RedisKeys(redis.keyPrefix()));
        SparkReadiness readiness = new SparkReadiness(grpc, metricsUrl, Duration.ofSeconds(1));
        ReplicaPublisher publisher = new ReplicaPublisher(store, id, grpc, metricsUrl, group, ttl, readiness);
        PublisherMetrics metrics = new PublisherMetrics(id, ttl, interval);
        HTTPServer metricsServer = metricsPort != null
                ? HTTPServer.builder().port(metricsPort).registry(metrics.registry()).buildAndStart()
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
                .addKeyValue("metricsUrl", metricsUrl).addKeyValue("group", group).addKeyValue("ttlMillis", ttl.toMillis())
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
        return 0;
    }

    private RouterConfig.Redis redisSettings() {
        RouterConfig routerConfig = config != null ? ConfigLoader.load(config, env)
                : ConfigLoader.parse("", withPlaceholderPool(env));
        return routerConfig.redis().orElseThrow(() -> new ConfigException("redis.address",
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
}
