package io.scrouter.loadtest.bench;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.router.RouterProcess;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Every server of a benchmark, each in its own process, started as users start them: a real
 * {@code redis-server}, the router jar ({@code java -jar extproc-…-all.jar --config FILE}) with the Redis store
 * and with the embedded store, and the no-op ext_proc server, {@code perTarget} of each. The replicas the
 * routers route to are Spark REST stand-ins in this JVM (the routers probe them once a second); nothing listens
 * on their gRPC addresses, since only the decision is measured. Servers and Redis are pinned to the server core.
 * Closing stops every process this started, and only those.
 */
final class ServerProcesses implements AutoCloseable {

    static final String KEY_PREFIX = "bench";
    static final int REPLICAS = 4;
    private static final Duration START_WITHIN = Duration.ofSeconds(120);

    /** One server of a target, and the client's channel to it. */
    /** @param metricsPort the router's Prometheus endpoint on loopback; -1 for the no-op, which has none */
    record Server(String name, int port, int metricsPort, long pid, ManagedChannel channel, ExtProcClient calls) {
    }

    private final Path dir;
    private final Cores cores;
    private final List<String> routerJvm;
    private final String redisSettings;
    private final String routerYaml;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final Map<Target, List<Server>> servers = new EnumMap<>(Target.class);
    private RedisProcess redis;

    private ServerProcesses(Path dir, Cores cores, List<String> routerJvm, String redisSettings, String routerYaml) {
        this.dir = dir;
        this.cores = cores;
        this.routerJvm = routerJvm;
        this.redisSettings = redisSettings;
        this.routerYaml = routerYaml;
    }

    /**
     * Starts Redis, the replicas' stand-ins and {@code perTarget} servers of each target in {@code targets}; each
     * server is asked nothing until it reports SERVING on gRPC health.
     */
    static ServerProcesses start(Path dir, Cores cores, List<Target> targets, int perTarget, List<String> routerJvm,
                                 Progress progress) throws Exception {
        return start(dir, cores, targets, perTarget, routerJvm, "", "", progress);
    }

    /**
     * As above, with {@code redisSettings} (such as {@code "followUpGather: 5ms"}) added to the Redis-backed routers'
     * redis section, and {@code routerYaml} (whole sections) to every router's configuration.
     */
    static ServerProcesses start(Path dir, Cores cores, List<Target> targets, int perTarget, List<String> routerJvm,
                                 String redisSettings, String routerYaml, Progress progress) throws Exception {
        ServerProcesses s = new ServerProcesses(dir, cores, routerJvm, redisSettings, routerYaml);
        try {
            s.begin(targets, perTarget, progress);
            return s;
        } catch (Exception e) {
            s.close();
            throw e;
        }
    }

    private void begin(List<Target> targets, int perTarget, Progress progress) throws Exception {
        redis = RedisProcess.start();
        toClose.add(redis);
        cores.pinServer(redis.pid());
        progress.say("redis-server on 127.0.0.1:%d (pid %d)", redis.port(), redis.pid());
        List<String> staticPool = new ArrayList<>();
        Config c = new Config();
        c.useSingleServer().setAddress(redis.address());
        RedissonClient admin = Redisson.create(c);
        try {
            RedisInstanceStore instances = new RedisInstanceStore(admin, new RedisKeys(KEY_PREFIX));
            for (int i = 0; i < REPLICAS; i++) {
                SparkRestStandIn rest = new SparkRestStandIn().load(i, 0, 8);
                toClose.add(rest);
                String grpc = "127.0.0.1:" + (17000 + i);
                instances.publish(new Replica("r" + i, grpc, rest.url(), ReplicaState.READY), Duration.ofHours(6))
                        .get(10, TimeUnit.SECONDS);
                staticPool.add("    - {id: r" + i + ", grpc: \"" + grpc + "\", metricsUrl: \"" + rest.url()
                        + "\", state: ready}");
            }
        } finally {
            admin.shutdown();
        }
        String redisYaml = "redis: {address: \"" + redis.address() + "\", keyPrefix: " + KEY_PREFIX
                + (redisSettings.isEmpty() ? "" : ", " + redisSettings) + "}\n";
        String embeddedYaml = "pool:\n  static:\n" + String.join("\n", staticPool) + "\n";
        for (Target t : targets) {
            List<Server> list = new ArrayList<>();
            for (int i = 0; i < perTarget; i++) {
                String name = t.name().toLowerCase(java.util.Locale.ROOT) + "-" + i;
                list.add(switch (t) {
                    case NOOP -> startNoop(name);
                    case ROUTER_REDIS -> startRouter(name, redisYaml);
                    case ROUTER_EMBEDDED -> startRouter(name, embeddedYaml);
                });
                progress.say("%s SERVING on 127.0.0.1:%d (pid %d)", name, list.get(i).port(), list.get(i).pid());
            }
            servers.put(t, list);
        }
    }

    private Server startRouter(String name, String yaml) throws Exception {
        int port = RedisProcess.freePort();
        int metricsPort = RedisProcess.freePort();
        RouterProcess p = RouterProcess.start(dir, port, "drainPeriod: 0s", yaml + routerYaml
                + "metrics: {bindAddress: 127.0.0.1, port: " + metricsPort + "}\n", jvm(name));
        toClose.add(p);
        if (!p.awaitServing(START_WITHIN)) {
            throw notServing(name, p.isAlive() ? -1 : p.awaitExit(Duration.ZERO), p.log());
        }
        cores.pinServer(p.pid());
        return server(name, port, metricsPort, p.pid());
    }

    private Server startNoop(String name) throws Exception {
        int port = RedisProcess.freePort();
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvm(name));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NoopProcessor.class.getName(),
                Integer.toString(port)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile()).start();
        toClose.add(() -> {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        });
        if (!awaitServing(port, p, START_WITHIN)) {
            throw notServing(name, p.isAlive() ? -1 : p.exitValue(), dir.resolve(name + ".log"));
        }
        cores.pinServer(p.pid());
        return server(name, port, -1, p.pid());
    }

    /**
     * Why a server never reported SERVING: it exited (a JVM option it refused, a port taken; its log says which) or
     * it kept running without serving. {@code exitStatus} is -1 while the process still runs.
     */
    static IOException notServing(String name, int exitStatus, Path log) {
        String what = exitStatus >= 0
                ? " exited with status " + exitStatus + " before reporting SERVING"
                : " did not report SERVING within " + START_WITHIN.toSeconds() + " s";
        return new IOException(name + what + "; its log: " + log);
    }

    /** The servers' JVM options, plus a GC log per server. */
    private List<String> jvm(String name) {
        List<String> args = new ArrayList<>(routerJvm);
        args.add(GcPauses.option(gcLog(name)));
        return args;
    }

    /** Where the server's {@code -Xlog:gc} goes. */
    Path gcLog(String name) {
        return dir.resolve(name + "-gc.log");
    }

    private Server server(String name, int port, int metricsPort, long pid) {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().directExecutor()
                .build();
        toClose.add(channel::shutdownNow);
        return new Server(name, port, metricsPort, pid, channel, new ExtProcClient(channel, LoadTools.ANSWER_WAIT));
    }

    private static boolean awaitServing(int port, Process p, Duration within) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        long deadline = System.nanoTime() + within.toNanos();
        try {
            while (System.nanoTime() < deadline && p.isAlive()) {
                try {
                    HealthCheckResponse r = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(HealthCheckRequest.newBuilder().setService(RouterProcess.HEALTH_SERVICE).build());
                    if (r.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                        return true;
                    }
                } catch (RuntimeException notYet) {
                    channel.resetConnectBackoff();
                }
                Thread.sleep(50);
            }
            return false;
        } finally {
            channel.shutdownNow();
        }
    }

    /** The first {@code n} servers of a target. */
    List<Server> of(Target t, int n) {
        List<Server> all = servers.get(t);
        if (all == null || all.size() < n) {
            throw new IllegalArgumentException("only " + (all == null ? 0 : all.size()) + " servers of " + t);
        }
        return all.subList(0, n);
    }

    List<ExtProcClient> calls(Target t, int n) {
        return of(t, n).stream().map(Server::calls).toList();
    }

    /** Process ids of the first {@code n} servers of a target. */
    List<Long> pids(Target t, int n) {
        return of(t, n).stream().map(Server::pid).toList();
    }

    RedisProcess redis() {
        return redis;
    }

    /** Process ids of everything this started (for telling them apart from other work on the machine). */
    List<Long> pids() {
        List<Long> pids = new ArrayList<>();
        if (redis != null && redis.pid() > 0) {
            pids.add(redis.pid());
        }
        servers.values().forEach(list -> list.forEach(s -> pids.add(s.pid())));
        return pids;
    }

    @Override
    public void close() {
        // Channels first, then servers, then Redis: reverse order of start.
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                System.err.println("stopping a benchmark process failed: " + e);
            }
        }
        toClose.clear();
    }
}
