package io.scrouter.extproc.redis;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.redisson.api.RedissonClient;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Routers over one real Redis topology (single with a password, Sentinel, Cluster): three idle replicas
 * (Spark-shaped REST endpoints whose load the test sets) published into the instance store through a client
 * built by {@link RedisClients} from the same {@code redis} section the routers read, as the replica publisher
 * builds its own; routers started from that section; an Envoy-like client for each. Everything it starts, it
 * stops; the topology itself belongs to the test class.
 */
final class TopologyRig implements AutoCloseable {

    static final String PREFIX = "topo";
    static final int REPLICAS = 3;
    /**
     * The rest of every router's configuration. Redis calls get 250 ms and a decision 1 s, well above a loopback
     * round trip on a busy 2-core machine: these tests are about topologies, not deadlines. Replicas stay in
     * the pool 30 s after they vanish from the store, far longer than any failover here, so a failover never
     * turns a session into a lost one.
     */
    static final String ROUTER_YAML = """
            pool: {pollInterval: 100ms, departureGrace: 30s}
            probe: {interval: 100ms, timeout: 1s, staleAfter: 3s}
            sessions: {idleTtl: 10m, refreshEvery: 1s}
            """;
    private static final String SERVER_YAML = "server: {bindAddress: 127.0.0.1, port: 0, decisionDeadline: 1s}\n";
    /** Published once, never renewed: no test here outlives it. */
    private static final Duration REPLICA_TTL = Duration.ofMinutes(10);

    /** Reads a key on the topology directly, bypassing the routers' client (null when absent). */
    interface KeyReader {
        String valueOf(String key) throws IOException;
    }

    private final String redisSection;
    private final KeyReader reader;
    private final RedissonClient publisherClient;
    private final RedisInstanceStore instances;
    private final List<SparkRestStandIn> rest = new ArrayList<>();
    private final List<Replica> replicas = new ArrayList<>();
    private final List<RouterServer> routers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    /**
     * @param redisSection the router's {@code redis:} section (one YAML line), with {@code keyPrefix: topo}
     * @param reader       reads a key on the topology without the routers' client
     */
    TopologyRig(String redisSection, KeyReader reader) throws Exception {
        this.redisSection = redisSection;
        this.reader = reader;
        RouterConfig.Redis settings = config().redis().orElseThrow();
        this.publisherClient = RedisClients.create(settings);
        try {
            this.instances = new RedisInstanceStore(publisherClient, new RedisKeys(settings.keyPrefix()));
            for (int i = 0; i < REPLICAS; i++) {
                SparkRestStandIn s = new SparkRestStandIn().load(0, 0, 2);
                rest.add(s);
                Replica r = new Replica("r" + i, "127.0.0.1:" + (27000 + i), s.url(), ReplicaState.READY);
                replicas.add(r);
                publish(r);
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    RouterConfig config() {
        return ConfigLoader.parse(SERVER_YAML + redisSection + "\n" + ROUTER_YAML, Map.of());
    }

    RouterConfig.Redis redisSettings() {
        return config().redis().orElseThrow();
    }

    /** Publishes (or re-publishes) a replica, bounded by a few Redis timeouts. */
    void publish(Replica r) throws Exception {
        instances.publish(r, REPLICA_TTL).get(storeCallBound().toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * How long a test waits for one Redis call made outside a router (publishing, reading): the first call
     * also connects (and in cluster mode reads the topology), so allow many Redis timeouts, and at least the
     * client's connect timeout.
     */
    Duration storeCallBound() {
        Duration t = redisSettings().timeout().multipliedBy(20);
        return t.compareTo(Duration.ofSeconds(5)) < 0 ? Duration.ofSeconds(5) : t;
    }

    /**
     * Bound for what the routers' background loops make true (a pool poll, a probe, a feed read, a count):
     * fifty of their cycles, each one interval plus one Redis call, for a machine whose cores are busy.
     */
    Duration loopBound() {
        RouterConfig c = config();
        Duration interval = c.pool().pollInterval().compareTo(c.probe().interval()) > 0
                ? c.pool().pollInterval() : c.probe().interval();
        return interval.plus(c.redis().orElseThrow().timeout()).multipliedBy(50);
    }

    void await(String what, BooleanSupplier condition) {
        awaitWithin(loopBound(), what, condition);
    }

    /** Polls the condition until it holds, at most {@code bound}; fails naming what it waited for. */
    static void awaitWithin(Duration bound, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + bound.toMillis() + " ms waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what);
            }
        }
    }

    RouterServer startRouter() throws Exception {
        RouterServer rs = RouterServer.start(config());
        routers.add(rs);
        return rs;
    }

    ExtProcClient envoyFor(RouterServer rs) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", rs.port()).usePlaintext().build();
        channels.add(ch);
        return new ExtProcClient(ch, Patience.ANSWER);
    }

    List<Replica> replicas() {
        return replicas;
    }

    SparkRestStandIn rest(int i) {
        return rest.get(i);
    }

    Replica replicaAt(String grpcAddress) {
        return replicas.stream().filter(r -> r.grpcAddress().equals(grpcAddress)).findFirst()
                .orElseThrow(() -> new AssertionError("the router wrote " + grpcAddress
                        + ", which is no replica of the pool " + replicas));
    }

    int indexOf(Replica r) {
        return replicas.indexOf(r);
    }

    /**
     * The replica id of the session's binding as the topology stores it, read without the routers' client; null
     * when there is none. Bindings are stored as {@code <id>@<identity>} (see {@link Binding}).
     */
    String storedBinding(String sessionId) throws IOException {
        return replicaIdOf(reader.valueOf(new RedisKeys(PREFIX).session(sessionId)));
    }

    /** The replica id in a stored binding value, or null for none. */
    static String replicaIdOf(String stored) {
        return stored == null ? null : Binding.decode(stored).replicaId();
    }

    String sessionKey(String sessionId) {
        return new RedisKeys(PREFIX).session(sessionId);
    }

    /**
     * Where the router sends one request, retrying an {@code UNAVAILABLE} answer the way Spark's client does
     * (the router answers so while Redis is briefly unreachable), at most {@code attempts} times, one pool
     * poll apart. Any other rejection fails the test with the router's message.
     */
    String route(ExtProcClient envoy, String method, String sessionId, int attempts) throws Exception {
        long pause = config().pool().pollInterval().toMillis();
        String last = "";
        for (int i = 0; i < attempts; i++) {
            ProcessingResponse answer = envoy.send(ExtProcClient.sparkCall(method, sessionId));
            String upstream = ExtProcClient.upstreamOf(answer);
            if (upstream != null) {
                return upstream;
            }
            int code = ExtProcClient.rejectionCode(answer);
            last = Status.fromCodeValue(code).getCode() + ": " + ExtProcClient.rejectionMessage(answer);
            if (code != Status.Code.UNAVAILABLE.value()) {
                throw new AssertionError(method + " of session " + sessionId + " was rejected: " + last);
            }
            Thread.sleep(pause);
        }
        throw new AssertionError(method + " of session " + sessionId + " still unavailable after " + attempts
                + " attempts: " + last);
    }

    /** {@link #route} with the attempts a steady topology needs: a rare blip on a busy machine, no more. */
    String route(ExtProcClient envoy, String method, String sessionId) throws Exception {
        return route(envoy, method, sessionId, 20);
    }

    @Override
    public void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        routers.forEach(RouterServer::close);
        rest.forEach(SparkRestStandIn::close);
        publisherClient.shutdown();
    }
}
