package io.scrouter.loadtest.replay;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.cli.Converters.HostPort;
import io.scrouter.extproc.cli.Converters.HostPortValue;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.trace.TraceEvent;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
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
@Command(name = "replay", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = {"Drive a running ext_proc service over gRPC as Envoy does, following a trace, against simulated "
                + "Spark replicas that report the load the placed sessions create; report placement and latency.",
                "The service must know the replicas: list them in its pool (--print-config prints that section) or "
                        + "let this command publish them into its Redis (--redis)."})
public final class ReplayCommand implements Callable<Integer> {

    @Option(names = "--target", paramLabel = "HOST:PORT", converter = HostPortValue.class,
            description = "The running ext_proc service (required unless --print-config).")
    HostPort target;

    @Option(names = "--trace", paramLabel = "FILE",
            description = "The trace to play (write one with: loadtest/bin/loadtest trace --scenario burst-5s-small "
                    + "--out burst.jsonl).")
    Path trace;

    @Option(names = "--speed", defaultValue = "10", paramLabel = "FACTOR",
            description = "How much faster than the trace's time, 0.01 to 10000 (default: ${DEFAULT-VALUE}).")
    double speed;

    @Option(names = "--replicas", defaultValue = "2", paramLabel = "N",
            description = "Simulated replicas, 1 to 26 (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--slots", defaultValue = "8", paramLabel = "N",
            description = "Task slots of each, 1 to 4096 (default: ${DEFAULT-VALUE}).")
    int slots;

    @Option(names = "--grpc-base-port", defaultValue = "15002", paramLabel = "PORT",
            description = "gRPC address of the first replica, the others follow; nothing listens there, the "
                    + "service only writes it into a header (default: ${DEFAULT-VALUE}).")
    int grpcBasePort;

    @Option(names = "--metrics-base-port", paramLabel = "PORT",
            description = "Spark REST port of the first replica, the others follow; 0 for free ports (default: 4040, "
                    + "or free ports with --redis, where the URLs are published at run time).")
    Integer metricsBasePort;

    @Option(names = "--redis", paramLabel = "URL",
            description = "Publish the replicas into this Redis instance store, such as redis://127.0.0.1:6379.")
    String redis;

    @Option(names = "--key-prefix", defaultValue = "scr", paramLabel = "PREFIX",
            description = "Key prefix of the service's redis section (default: ${DEFAULT-VALUE}).")
    String keyPrefix;

    @Option(names = "--max-seconds", defaultValue = "300", paramLabel = "N",
            description = "Wall-time bound: trace events due later are left out, 1 to 86400 (default: ${DEFAULT-VALUE}).")
    double maxSeconds;

    @Option(names = "--drain-seconds", defaultValue = "60", paramLabel = "N",
            description = "How long to wait for answers after the last event, 0 to 3600 (default: ${DEFAULT-VALUE}).")
    double drainSeconds;

    @Option(names = "--print-config", description = "Print the pool section naming the simulated replicas, and stop.")
    boolean printConfig;

    @Spec
    CommandSpec spec;

    public ReplayCommand() {
    }

    @Override
    public Integer call() throws Exception {
        // With Redis the metrics URLs are published at run time, so free ports do; a static pool needs them fixed.
        ReplicaLayout layout = new ReplicaLayout(Bounds.within(spec, "--replicas", replicas, 1, 26), grpcBasePort,
                metricsBasePort != null ? metricsBasePort : redis == null ? 4040 : 0);
        int slots = Bounds.within(spec, "--slots", this.slots, 1, 4096);
        PrintWriter out = spec.commandLine().getOut();
        if (printConfig) {
            out.print(poolForOperator(layout, slots));
            out.flush();
            return 0;
        }
        if (target == null || trace == null) {
            throw new ParameterException(spec.commandLine(), "give --target HOST:PORT of the running ext_proc service "
                    + "and --trace FILE, or --print-config");
        }
        Bounds.within(spec, "--speed", speed, 0.01, 10_000);
        Bounds.within(spec, "--max-seconds", maxSeconds, 1, 86_400);
        Bounds.within(spec, "--drain-seconds", drainSeconds, 0, 3600);
        List<TraceEvent> events = TraceFile.read(trace.toString(), speed, maxSeconds);

        try (SimulatedReplicas replicas = new SimulatedReplicas(layout, slots);
             RedisPublication published = redis == null ? null : new RedisPublication(redis, keyPrefix, replicas)) {
            out.printf(Locale.ROOT, "simulated replicas (%d task slots each): %s%n", slots,
                    replicas.all().stream().map(r -> r.id() + " grpc " + r.grpcAddress() + " metrics "
                            + r.metricsUrl()).toList());
            out.println(published != null ? "published into Redis " + redis + " under key prefix '" + keyPrefix + "'"
                    : "expecting the service's static pool to list them (see --print-config)");
            out.flush();
            if (!replicas.awaitProbed(2, 30_000)) {
                throw new IllegalStateException("the service did not probe every simulated replica within 30 s, so "
                        + "it cannot be placing by their load: check that its pool lists them (--print-config) or "
                        + "that --redis and --key-prefix match its redis section");
            }
            ManagedChannel channel = NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext().build();
            try {
                out.printf(Locale.ROOT, "replaying %d events of %d sessions against %s at %.0fx speed ...%n",
                        events.size(), TraceFile.sessions(events), target, speed);
                out.flush();
                ServiceReplay replay = new ServiceReplay(new ExtProcClient(channel, LoadTools.ANSWER_WAIT), replicas, speed);
                long start = System.nanoTime();
                ReplayStats stats = replay.run(events, (long) (drainSeconds * 1000));
                out.printf(Locale.ROOT, "done in %.1f s (replay fell behind the trace by at most %d ms)%n%n",
                        (System.nanoTime() - start) / 1e9, replay.maxLagMillis());
                out.print(ReplayReport.render(stats, replicas.ids()));
                out.flush();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        return 0;
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
