package io.scrouter.loadtest.demo;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.loadtest.cli.Bounds;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.replay.LiveReplica;
import io.scrouter.loadtest.replay.ReplicaLayout;
import io.scrouter.loadtest.replay.SimulatedReplicas;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.trace.Replay;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.workload.TraceRenderer;
import io.scrouter.loadtest.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The newcomer's tour: starts the real service on an embedded-style configuration (in-memory store, static
 * pool, default policy) in front of pretend replicas shaped as the scenario's cluster, whose Spark REST endpoints
 * report the load the placed sessions create, replays the scenario's sessions over real gRPC exactly as Envoy
 * would call the service, and prints where each session went and that every later request of it reached the same
 * replica. Exit status 0 only when every request of a session reached its first replica.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = {"Start the real service in front of pretend replicas shaped as the scenario's cluster, replay "
                + "the scenario's sessions over gRPC as Envoy would, and show where each session went and that it "
                + "stayed there.",
                "One router with a static pool: the scenario's routers, probe settings and cluster changes are not "
                        + "played."})
public final class Demo implements Callable<Integer> {

    /** ReplicaLayout names replicas a to z. */
    private static final int MAX_REPLICAS = 26;

    @Option(names = "--scenario", defaultValue = "demo", paramLabel = "NAME|FILE",
            description = "A built-in scenario or a scenario file; its clients and cluster.replicas are used "
                    + "(default: ${DEFAULT-VALUE}).")
    String scenario;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--speed", defaultValue = "10", paramLabel = "FACTOR",
            description = "How much faster than the scenario's time to replay, 0.1 to 10000 (default: ${DEFAULT-VALUE}).")
    double speed;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N",
            description = "Seed of the scenario's workload (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--max-seconds", defaultValue = "300", paramLabel = "SECONDS",
            description = "Wall-time bound of the replay, 1 to 86400: later events are left out (default: ${DEFAULT-VALUE}).")
    long maxSeconds;

    @Spec
    CommandSpec command;

    public Demo() {
    }

    @Override
    public Integer call() throws Exception {
        Bounds.within(command, "--speed", speed, 0.1, 10_000);
        Bounds.within(command, "--max-seconds", maxSeconds, 1, 86_400);
        ScenarioSpec spec = ScenarioFiles.load(scenario, overrides.values());
        List<Integer> slots = spec.cluster().replicas();
        if (slots.size() > MAX_REPLICAS) {
            throw new ParameterException(command.commandLine(), "the demo plays at most " + MAX_REPLICAS
                    + " replicas; scenario " + spec.name() + " has " + slots.size()
                    + " (give fewer with --set cluster.replicas=[8,8,8])");
        }
        List<TraceEvent> whole = TraceRenderer.render(new Workload(spec, seed));
        double lastMillis = maxSeconds * 1000.0 * speed;
        List<TraceEvent> trace = whole.stream().filter(e -> e.atMillis() <= lastMillis).toList();
        PrintWriter out = command.commandLine().getOut();

        SimulatedReplicas replicas = new SimulatedReplicas(new ReplicaLayout(slots.size(), 15002, 0), slots);
        // The embedded default's shape (no redis section), on free ports, probing 4 times a second so the
        // short demo sees load move.
        String yaml = "server: {bindAddress: 127.0.0.1, port: 0}\n"
                + "probe: {interval: 250ms, timeout: 1s, staleAfter: 5s}\n"
                + "admin: {port: 0}\n"
                + replicas.staticPoolYaml();
        ExecutorService requests = Executors.newFixedThreadPool(4);
        try (RouterServer router = RouterServer.start(ConfigLoader.parse(yaml, Map.of()))) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
            ExtProcClient envoy = new ExtProcClient(channel, LoadTools.ANSWER_WAIT);
            if (!replicas.awaitProbed(2, 30_000)) {
                throw new IllegalStateException("the router did not probe every pretend replica twice within 30 s");
            }
            out.printf(Locale.ROOT, "scrouter on 127.0.0.1:%d, policy '%s', replicas %s (task slots %s)%n",
                    router.port(), router.config().placement().policy(), replicas.ids(), slots);
            out.printf(Locale.ROOT, "scenario %s: %s%n", spec.name(), spec.summary());
            if (trace.size() < whole.size()) {
                out.printf(Locale.ROOT, "(the replay stops after %d s of wall time: %d of %d events; raise "
                        + "--max-seconds or --speed for all)%n", maxSeconds, trace.size(), whole.size());
            }
            out.printf(Locale.ROOT, "replaying %d events of %d sessions at %sx speed ...%n%n", trace.size(),
                    trace.stream().filter(e -> e instanceof TraceEvent.SessionStart).count(), number(speed));
            out.flush();

            Map<String, String> placedOn = new ConcurrentHashMap<>();
            AtomicInteger requestsSent = new AtomicInteger();
            AtomicInteger moved = new AtomicInteger();
            List<String> problems = new CopyOnWriteArrayList<>();
            new Replay(speed).play(trace, e -> {
                if (e instanceof TraceEvent.SessionStart) {
                    String upstream = call(envoy, "Config", e.session());
                    requestsSent.incrementAndGet();
                    LiveReplica r = replicas.at(upstream);
                    if (r == null) {
                        problems.add("session " + e.session() + " got no replica: " + upstream);
                        return;
                    }
                    placedOn.put(e.session(), upstream);
                    r.sessionPlaced();
                    out.printf(Locale.ROOT, "%6.1fs  new session %s… → %-9s  load now %s%n",
                            e.atMillis() / 1000.0, e.session().substring(0, 8), r.id(), loads(replicas));
                    out.flush();
                } else if (e instanceof TraceEvent.Query q) {
                    String home = placedOn.get(q.session());
                    if (home == null) {
                        return; // its start got no replica, and was reported
                    }
                    requests.execute(() -> {
                        for (String rpc : q.rpcs()) {
                            String upstream = call(envoy, rpc, q.session());
                            requestsSent.incrementAndGet();
                            if (!upstream.equals(home)) {
                                moved.incrementAndGet();
                            }
                        }
                        LiveReplica r = replicas.at(home);
                        if (r != null) {
                            r.submit(q.tasks(), (long) (q.taskMillis() * 1_000_000 / speed));
                        }
                    });
                } else {
                    String home = placedOn.get(e.session());
                    if (home == null) {
                        return;
                    }
                    requests.execute(() -> {
                        String upstream = call(envoy, "ReleaseSession", e.session());
                        requestsSent.incrementAndGet();
                        if (!upstream.equals(home)) {
                            moved.incrementAndGet();
                        }
                    });
                }
            });
            requests.shutdown();
            if (!requests.awaitTermination(30, TimeUnit.SECONDS)) {
                problems.add("requests still unanswered 30 s after the replay ended");
            }
            channel.shutdownNow();

            out.printf(Locale.ROOT, "%nsessions per replica:%n");
            replicas.all().forEach(r -> out.printf(Locale.ROOT, "  %-9s %s %d%n", r.id(),
                    "#".repeat(r.sessions()), r.sessions()));
            out.printf(Locale.ROOT, "%n%d requests (Config, AnalyzePlan, ExecutePlan, ReattachExecute, "
                    + "ReleaseExecute, ReleaseSession) for %d sessions; requests that reached a replica other than "
                    + "their session's first: %d%s%n", requestsSent.get(), placedOn.size(), moved.get(),
                    moved.get() == 0 ? " — every session stayed pinned." : " — SESSIONS MOVED.");
            problems.forEach(p -> out.println("problem: " + p));
            out.flush();
            return moved.get() == 0 && problems.isEmpty() ? 0 : 1;
        } finally {
            requests.shutdownNow();
            replicas.close();
        }
    }

    private static String number(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    private static String call(ExtProcClient envoy, String rpc, String session) {
        try {
            ProcessingResponse r = envoy.send(ExtProcClient.sparkCall(rpc, session));
            String upstream = ExtProcClient.upstreamOf(r);
            return upstream != null ? upstream : "rejected(" + ExtProcClient.rejectionCode(r) + ")";
        } catch (Exception e) {
            return "error(" + e + ")";
        }
    }

    private static String loads(SimulatedReplicas replicas) {
        StringBuilder sb = new StringBuilder();
        for (LiveReplica r : replicas.all()) {
            sb.append(String.format(Locale.ROOT, "%s=%.2f ", r.id().substring(r.id().length() - 1), r.utilisation()));
        }
        return sb.toString().trim();
    }
}
