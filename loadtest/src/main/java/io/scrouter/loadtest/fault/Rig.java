package io.scrouter.loadtest.fault;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.redisson.api.RedissonClient;

import java.net.InetSocketAddress;
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
 * Replicas and routers on loopback around a Redis the caller provides (one server or a Sentinel group):
 * each replica is a Spark-REST stand-in plus a gRPC address (nothing listens there; only decisions are
 * measured), kept in the instance store by a renewal loop that plays its publisher. Routers run in this JVM
 * so the fault tools can read their load board and pool directly.
 */
final class Rig implements AutoCloseable {

    private final RedisInstanceStore instances;
    private final String redisYaml;
    private final Duration replicaTtl;
    private final List<SparkRestStandIn> rest = new ArrayList<>();
    private final List<Replica> replicas = new ArrayList<>();
    private final Set<String> alive = ConcurrentHashMap.newKeySet();
    private final List<RouterServer> routers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "replica-publishers");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param admin      client used only to publish replicas (the publishers' connection)
     * @param redisYaml  the routers' {@code redis:} section, one line
     * @param prefix     key prefix shared by publishers and routers
     * @param count      replicas r0..r(count-1), 8 task slots each, with a little standing load
     * @param replicaTtl instance-store expiry; renewed every ttl/4 while the replica lives, like the publisher
     */
    Rig(RedissonClient admin, String redisYaml, String prefix, int count, Duration replicaTtl) throws Exception {
        this.instances = new RedisInstanceStore(admin, new RedisKeys(prefix));
        this.redisYaml = redisYaml;
        this.replicaTtl = replicaTtl;
        for (int i = 0; i < count; i++) {
            SparkRestStandIn s = new SparkRestStandIn().load(i % 3, 0, 8);
            rest.add(s);
            Replica r = new Replica("r" + i, "127.0.0.1:" + (26000 + i), s.url(), ReplicaState.READY);
            replicas.add(r);
            alive.add(r.id());
            instances.publish(r, replicaTtl).get(10, TimeUnit.SECONDS);
        }
        long every = Math.max(50, replicaTtl.toMillis() / 4);
        renewer.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
    }

    private void renew() {
        for (Replica r : replicas) {
            if (alive.contains(r.id())) {
                // Fire and forget, as a publisher does: a failed renewal (Redis away) is retried next round.
                instances.publish(r, replicaTtl);
            }
        }
    }

    /** Starts a router with the rig's Redis and {@code extraYaml} (pool, probe, sessions sections). */
    RouterServer startRouter(String extraYaml, DecisionObserver observer) throws Exception {
        String yaml = "server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: 150ms}\n" + redisYaml + "\n"
                + extraYaml;
        // The same transport settings as RouterServer.start(config), plus the observer the tools read.
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .directExecutor()
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true);
        RouterServer rs = RouterServer.start(ConfigLoader.parse(yaml, Map.of()), builder, observer,
                SystemTime.shared());
        routers.add(rs);
        return rs;
    }

    /** Routers started together, each with its decision log and an Envoy stand-in pointed at it. */
    record Fleet(List<RouterServer> routers, List<Outcomes> outcomes, List<ExtProcClient> envoys) {
    }

    /** Starts {@code count} routers and waits (at most 20 s) until every one has fresh samples of every replica. */
    Fleet startFleet(int count, String extraYaml) throws Exception {
        List<RouterServer> started = new java.util.ArrayList<>();
        List<Outcomes> logs = new java.util.ArrayList<>();
        List<ExtProcClient> envoys = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            Outcomes o = new Outcomes();
            RouterServer rs = startRouter(extraYaml, o);
            started.add(rs);
            logs.add(o);
            envoys.add(envoyFor(rs));
        }
        long freshBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!allFresh() && System.nanoTime() < freshBy) {
            Thread.sleep(50);
        }
        return new Fleet(List.copyOf(started), List.copyOf(logs), List.copyOf(envoys));
    }

    ExtProcClient envoyFor(RouterServer rs) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, LoadTools.ANSWER_WAIT);
    }

    List<Replica> replicas() {
        return replicas;
    }

    /** The replica dies: its REST API stops answering and its publisher stops renewing it. */
    void kill(int i) {
        rest.get(i).close();
        alive.remove(replicas.get(i).id());
    }

    /** True once every router has a fresh load sample of every replica (placement is load-aware). */
    boolean allFresh() {
        long now = System.currentTimeMillis();
        return routers.stream().allMatch(rs -> replicas.stream().allMatch(r -> rs.board().isFresh(r.id(), now)));
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
        routers.forEach(RouterServer::close);
        rest.forEach(SparkRestStandIn::close);
    }
}
