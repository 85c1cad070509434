package io.scrouter.loadtest.replay;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.loadtest.Args;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.loadtest.trace.TraceEvent;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code loadtest replay}: drives an already running ext_proc service over gRPC as Envoy does, following a
 * trace, against simulated Spark replicas whose REST endpoints report the load the placed sessions create,
 * and reports placement quality and the service's decision latency together.
 *
 * <p>The service must know the replicas: either its configuration lists them (print that pool with
 * {@code --print-config}; the defaults match the embedded default's two replicas), or this command publishes
 * them into the service's Redis instance store ({@code --redis}).
 */
public final class ReplayCommand {

    static final String USAGE = "replay --target HOST:PORT --trace FILE [--speed 10] [--replicas 2] [--slots 8] "
            + "[--grpc-base-port 15002] [--metrics-base-port 4040] [--redis redis://127.0.0.1:6379 --key-prefix scr] "
            + "[--max-seconds 300] [--drain-seconds 60] | replay --print-config [--replicas 2] [--metrics-base-port 4040]";

    private ReplayCommand() {
    }

    public static void main(String[] argv) throws Exception {
        Flags flags = new Flags(argv, "print-config");
        Args args = new Args(flags.rest(), Set.of("target", "trace", "speed", "replicas", "slots", "grpc-base-port",
                "metrics-base-port", "redis", "key-prefix", "max-seconds", "drain-seconds"), USAGE);
        String redis = args.get("redis", null);
        // With Redis the metrics URLs are published at run time, so free ports do; a static pool needs them fixed.
        ReplicaLayout layout = new ReplicaLayout((int) args.getLong("replicas", 2),
                (int) args.getLong("grpc-base-port", 15002),
                (int) args.getLong("metrics-base-port", redis == null ? 4040 : 0));
        int slots = (int) args.getLong("slots", 8);
        if (flags.has("print-config")) {
            System.out.print(poolForOperator(layout, slots));
            return;
        }
        String target = args.get("target", null);
        if (target == null || !target.matches("[^:]+:\\d+")) {
            throw new IllegalArgumentException("--target HOST:PORT of the running ext_proc service is required; "
                    + "usage: " + USAGE);
        }
        double speed = args.getDouble("speed", 10);
        List<TraceEvent> trace = TraceFile.read(args.get("trace", null), speed, args.getDouble("max-seconds", 300));

        try (SimulatedReplicas replicas = new SimulatedReplicas(layout, slots);
             RedisPublication published = redis == null ? null
                     : new RedisPublication(redis, args.get("key-prefix", "scr"), replicas)) {
            System.out.printf(Locale.ROOT, "simulated replicas (%d task slots each): %s%n", slots,
                    replicas.all().stream().map(r -> r.id() + " grpc " + r.grpcAddress() + " metrics "
                            + r.metricsUrl()).toList());
            System.out.println(published != null ? "published into Redis " + redis + " under key prefix '"
                    + args.get("key-prefix", "scr") + "'" : "expecting the service's static pool to list them "
                    + "(see --print-config)");
            if (!replicas.awaitProbed(2, 30_000)) {
                throw new IllegalStateException("the service did not probe every simulated replica within 30 s, so "
                        + "it cannot be placing by their load: check that its pool lists them (--print-config) or "
                        + "that --redis and --key-prefix match its redis section");
            }
            ManagedChannel channel = NettyChannelBuilder.forTarget(target).usePlaintext().build();
            try {
                System.out.printf(Locale.ROOT, "replaying %d events of %d sessions against %s at %.0fx speed ...%n",
                        trace.size(), TraceFile.sessions(trace), target, speed);
                ServiceReplay replay = new ServiceReplay(new ExtProcClient(channel, LoadTools.ANSWER_WAIT), replicas, speed);
                long start = System.nanoTime();
                ReplayStats stats = replay.run(trace, (long) (args.getDouble("drain-seconds", 60) * 1000));
                System.out.printf(Locale.ROOT, "done in %.1f s (replay fell behind the trace by at most %d ms)%n%n",
                        (System.nanoTime() - start) / 1e9, replay.maxLagMillis());
                System.out.print(ReplayReport.render(stats, replicas.ids()));
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    static String poolForOperator(ReplicaLayout layout, int slots) {
        return "# The simulated replicas of `loadtest/bin/loadtest replay --replicas " + layout.count()
                + " --grpc-base-port " + layout.grpcBasePort() + " --metrics-base-port " + layout.metricsBasePort()
                + "` (" + slots + " task slots each).\n"
                + "# Put this pool section into the service's configuration (one without a redis section), start\n"
                + "# the service, then run the replay with the same options plus --target and --trace.\n"
                + ReplicaLayout.staticPoolYaml(layout.plannedPool());
    }
}
