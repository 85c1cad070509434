package io.scrouter.loadtest.reliability;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A whole system on loopback for fault tests: a real redis-server, replicas (Spark-shaped REST endpoints
 * and a gRPC address each) kept alive in the instance store by a renewal loop standing in for their
 * publishers, and router instances sharing the Redis. Everything it starts, it stops.
 */
public final class LocalCluster implements AutoCloseable {

    public static final String PREFIX = "lc";

    private final RedisProcess redis;
    private final RedissonClient admin;
    private final RedisInstanceStore instances;
    private final List<SparkRestStandIn> rest = new ArrayList<>();
    private final List<Replica> replicas = new ArrayList<>();
    private final Set<String> renewed = ConcurrentHashMap.newKeySet();
    private final Map<String, ReplicaState> states = new ConcurrentHashMap<>();
    private final List<RouterServer> routers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "cluster-renewer");
        t.setDaemon(true);
        return t;
    });
    private final Duration replicaTtl;
    private final Duration renewEvery;
    /** Taken before each renewal is sent, so an entry renewed then expires no earlier than this plus the TTL. */
    private volatile long lastRenewalNanos;
    private final String routerYaml;

    /**
     * @param replicaCount replicas r0..r(n-1), idle, 2 slots each
     * @param replicaTtl   instance-store expiry; renewed every ttl/4 while the replica is alive
     * @param routerYaml   extra router configuration (pool, probe, sessions...) merged after the basics;
     *                     must not repeat the server or redis sections
     */
    public LocalCluster(int replicaCount, Duration replicaTtl, String routerYaml) throws Exception {
        this.redis = RedisProcess.start();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        this.admin = Redisson.create(c);
        this.instances = new RedisInstanceStore(admin, new RedisKeys(PREFIX));
        this.replicaTtl = replicaTtl;
        this.routerYaml = routerYaml;
        this.lastRenewalNanos = System.nanoTime();
        for (int i = 0; i < replicaCount; i++) {
            SparkRestStandIn s = new SparkRestStandIn().load(0, 0, 2);
            rest.add(s);
            Replica r = new Replica("r" + i, "127.0.0.1:" + (25000 + i), s.url(), ReplicaState.READY);
            replicas.add(r);
            renewed.add(r.id());
            states.put(r.id(), ReplicaState.READY);
            instances.publish(r, replicaTtl).get();
        }
        this.renewEvery = Duration.ofMillis(Math.max(50, replicaTtl.toMillis() / 4));
        renewer.scheduleWithFixedDelay(this::renew, renewEvery.toMillis(), renewEvery.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void renew() {
        lastRenewalNanos = System.nanoTime();
        for (Replica r : replicas) {
            if (renewed.contains(r.id())) {
                instances.publish(new Replica(r.id(), r.grpcAddress(), r.metricsUrl(), states.get(r.id())), replicaTtl);
            }
        }
    }

    /**
     * Starts one more router instance sharing the cluster's Redis. Its Redis and decision deadlines are
     * production's with room ({@link Patience#REDIS_TIMEOUT}): these tests are about replicas, routers and
     * Redis faults they cause on purpose, not about a loaded machine missing a 50 ms deadline, which would open
     * the breaker on a healthy Redis and let rendezvous place a session some router did not hold in memory.
     */
    public RouterServer startRouter() throws Exception {
        return startRouter("");
    }

    /**
     * As {@link #startRouter()}, with {@code redisSettings} (for example {@code "followUpGather: 5ms"}) added to its
     * redis section.
     */
    public RouterServer startRouter(String redisSettings) throws Exception {
        String yaml = """
                server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: %dms}
                redis: {address: "%s", timeout: %dms, keyPrefix: %s%s}
                """.formatted(Patience.DECISION_DEADLINE.toMillis(), redis.address(),
                Patience.REDIS_TIMEOUT.toMillis(), PREFIX, redisSettings.isEmpty() ? "" : ", " + redisSettings)
                + routerYaml;
        RouterServer rs = RouterServer.start(ConfigLoader.parse(yaml, Map.of()));
        routers.add(rs);
        return rs;
    }

    public ExtProcClient envoyFor(RouterServer rs) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, Patience.decision(rs.config()));
    }

    public List<Replica> replicas() {
        return replicas;
    }

    public Replica replica(int i) {
        return replicas.get(i);
    }

    /** The replica dies: its metrics endpoint stops answering and its publisher stops renewing. */
    public void kill(int i) {
        rest.get(i).close();
        renewed.remove(replicas.get(i).id());
    }

    /** The control plane stops: no replica is renewed any more. */
    public void stopPublishing() {
        renewed.clear();
    }

    /** The replica's publisher announces a new state (warming or draining), published at once. */
    public void announce(int i, ReplicaState state) throws Exception {
        Replica r = replicas.get(i);
        states.put(r.id(), state);
        instances.publish(new Replica(r.id(), r.grpcAddress(), r.metricsUrl(), state), replicaTtl).get();
    }

    /** The instance-store lifetime of each replica's entry. */
    public Duration replicaTtl() {
        return replicaTtl;
    }

    /**
     * When the last renewal pass started ({@link System#nanoTime()}): an entry it renewed expires no earlier
     * than this plus {@link #replicaTtl()}.
     */
    public long lastRenewalNanos() {
        return lastRenewalNanos;
    }

    /**
     * The replica id the session is bound to in Redis, read without the routers' client; null when it has none.
     * Bindings are stored as {@code <id>@<identity>}, or with a {@code !lost:}/{@code !released:} prefix.
     */
    public String storedReplicaId(String session) throws IOException {
        String value = redis().command("GET", PREFIX + ":session:" + session);
        return value == null || value.startsWith("$-1") ? null : Binding.decode(value).replicaId();
    }

    public RedisProcess redis() {
        return redis;
    }

    public void stopRouter(RouterServer rs) {
        routers.remove(rs);
        rs.close();
    }

    @Override
    public void close() throws Exception {
        renewer.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
        routers.forEach(RouterServer::close);
        rest.forEach(SparkRestStandIn::close);
        admin.shutdown();
        redis.close();
    }
}
