package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.Bounds;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.router.RouterProcess;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How long a freshly started ext_proc server takes to answer its first requests, for the router with and
 * without its warm-up and for a no-op server (what gRPC on a cold JVM costs by itself). Each server is a new
 * process, started as users start it and asked only once it reports SERVING, as Envoy asks only healthy hosts.
 * The client is one warm JVM (it first talks to a throw-away no-op), so what is measured is the server's
 * start, not the client's. Rounds interleave the three servers.
 *
 * <pre>loadtest/bin/loadtest first-requests [rounds]</pre>
 */
@Command(name = "first-requests", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        sortOptions = false, description = "How long a freshly started ext_proc server takes to answer its first "
        + "requests: the router with and without its warm-up, and a no-op server, each a new process; rounds "
        + "interleave. Needs redis-server.")
public final class FirstRequests implements Callable<Integer> {

    private static final int REQUESTS = 10;

    @Parameters(index = "0", arity = "0..1", defaultValue = "5", paramLabel = "ROUNDS",
            description = "Rounds of the three servers, 1 to 50 (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Spec
    CommandSpec spec;

    public FirstRequests() {
    }

    @Override
    public Integer call() throws Exception {
        int rounds = Bounds.within(spec, "ROUNDS", this.rounds, 1, 50);
        Path work = Files.createTempDirectory("first-requests");
        try (RedisProcess redis = RedisProcess.start()) {
            Config c = new Config();
            c.useSingleServer().setAddress(redis.address());
            RedissonClient admin = Redisson.create(c);
            RedisInstanceStore instances = new RedisInstanceStore(admin, new RedisKeys("fr"));
            for (int i = 0; i < 4; i++) {
                instances.publish(new Replica("r" + i, "127.0.0.1:" + (21000 + i), null, ReplicaState.READY),
                        Duration.ofHours(1)).get(5, TimeUnit.SECONDS);
            }
            String yaml = "redis: {address: \"" + redis.address() + "\", keyPrefix: fr}\n";
            // The client's own warm-up: classes and JIT of this JVM, against a server that is thrown away.
            measure("client warm-up", () -> startNoop(work), 50);
            Map<String, List<long[]>> results = new LinkedHashMap<>();
            for (int round = 0; round < rounds; round++) {
                System.err.printf("round %d/%d%n", round + 1, rounds);
                results.computeIfAbsent("no-op server", k -> new ArrayList<>())
                        .add(measure("no-op", () -> startNoop(work), REQUESTS));
                results.computeIfAbsent("router, warm-up off", k -> new ArrayList<>())
                        .add(measure("router cold", () -> startRouter(work, yaml, false), REQUESTS));
                results.computeIfAbsent("router, warm-up on (default)", k -> new ArrayList<>())
                        .add(measure("router warm", () -> startRouter(work, yaml, true), REQUESTS));
            }
            admin.shutdown();
            System.out.println("| server (fresh process) | 1st request ms | 2nd ms | slowest of first 5 ms | "
                    + "median of 6th-10th ms |");
            System.out.println("|---|---:|---:|---:|---:|");
            results.forEach((name, runs) -> System.out.printf("| %s | %s | %s | %s | %s |%n", name,
                    median(runs, 0), median(runs, 1), median(runs, 2), median(runs, 3)));
            System.out.printf("(medians over %d rounds, [min-max] in brackets; new session on every request, "
                    + "Redis store)%n", rounds);
        }
        return 0;
    }

    /** A server process and how to stop it. */
    private record Started(int port, AutoCloseable process) {
    }

    private interface Starter {
        Started start() throws Exception;
    }

    private static Started startNoop(Path work) throws Exception {
        int port = RedisProcess.freePort();
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), NoopProcessor.class.getName(), Integer.toString(port))
                .redirectErrorStream(true).redirectOutput(work.resolve("noop-" + port + ".log").toFile()).start();
        return new Started(port, () -> {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
        });
    }

    private static Started startRouter(Path work, String yaml, boolean warmUp) throws Exception {
        int port = RedisProcess.freePort();
        RouterProcess r = RouterProcess.start(work, port, "warmUp: " + warmUp, yaml, List.of("-Xmx512m"));
        return new Started(port, r);
    }

    /**
     * Starts the server, waits until it reports SERVING, then sends {@code n} requests one after the other, each
     * a new session; returns {first, second, slowest of the first five, median of the 6th to 10th} in micros.
     */
    private static long[] measure(String what, Starter starter, int n) throws Exception {
        Started s = starter.start();
        try {
            if (!awaitServing(s.port(), Duration.ofSeconds(120))) {
                throw new IllegalStateException(what + " did not report SERVING");
            }
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", s.port()).usePlaintext().build();
            try {
                ExtProcClient calls = new ExtProcClient(channel, LoadTools.ANSWER_WAIT);
                long[] micros = new long[n];
                for (int i = 0; i < n; i++) {
                    CompletableFuture<ProcessingResponse> done = new CompletableFuture<>();
                    long started = System.nanoTime();
                    calls.sendAsync(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString())).whenComplete((r, e) -> {
                        if (e != null) {
                            done.completeExceptionally(e);
                        } else {
                            done.complete(r);
                        }
                    });
                    done.get(30, TimeUnit.SECONDS);
                    micros[i] = (System.nanoTime() - started) / 1000;
                }
                long slowestOfFive = 0;
                for (int i = 0; i < Math.min(5, n); i++) {
                    slowestOfFive = Math.max(slowestOfFive, micros[i]);
                }
                long[] tail = java.util.Arrays.copyOfRange(micros, Math.min(5, n), n);
                java.util.Arrays.sort(tail);
                return new long[] {micros[0], n > 1 ? micros[1] : micros[0], slowestOfFive,
                        tail.length == 0 ? micros[0] : tail[tail.length / 2]};
            } finally {
                channel.shutdownNow();
            }
        } finally {
            s.process().close();
        }
    }

    private static boolean awaitServing(int port, Duration within) throws InterruptedException {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        long deadline = System.nanoTime() + within.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                try {
                    var r = io.grpc.health.v1.HealthGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.SECONDS)
                            .check(io.grpc.health.v1.HealthCheckRequest.newBuilder()
                                    .setService(RouterProcess.HEALTH_SERVICE).build());
                    if (r.getStatus() == io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING) {
                        return true;
                    }
                } catch (RuntimeException notYet) {
                    channel.resetConnectBackoff();
                }
                Thread.sleep(20);
            }
            return false;
        } finally {
            channel.shutdownNow();
        }
    }

    private static String median(List<long[]> runs, int column) {
        long[] v = runs.stream().mapToLong(r -> r[column]).sorted().toArray();
        return String.format("%.2f [%.2f-%.2f]", v[v.length / 2] / 1000.0, v[0] / 1000.0, v[v.length - 1] / 1000.0);
    }
}
