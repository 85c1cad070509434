package io.scrouter.loadtest.demo;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.loadtest.Args;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.loadtest.replay.LiveReplica;
import io.scrouter.loadtest.replay.ReplicaLayout;
import io.scrouter.loadtest.replay.SimulatedReplicas;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.trace.Replay;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.workload.TraceRenderer;
import io.scrouter.loadtest.workload.Workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The newcomer's tour: starts the real service on an embedded-style configuration (in-memory store, static
 * pool, default policy) in front of three pretend replicas whose Spark REST endpoints report the load the
 * placed sessions create, replays a short trace over real gRPC exactly as Envoy would call the service,
 * and prints where each session went and that every later request of it reached the same replica.
 */
public final class Demo {

    private Demo() {
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, Set.of("speed", "seed"), "demo [--speed 10] [--seed 1]");
        double speed = args.getDouble("speed", 10);
        List<TraceEvent> trace = TraceRenderer.render(new Workload(ScenarioFiles.load("demo"), args.getLong("seed", 1)));

        SimulatedReplicas replicas = new SimulatedReplicas(new ReplicaLayout(3, 15002, 0), 4);
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
            Thread.sleep(600); // first probes
            System.out.printf(Locale.ROOT, "scrouter on 127.0.0.1:%d, policy '%s', replicas %s%n", router.port(),
                    router.config().placement().policy(), replicas.ids());
            System.out.printf(Locale.ROOT, "replaying %d events of %d sessions at %.0fx speed ...%n%n", trace.size(),
                    trace.stream().filter(e -> e instanceof TraceEvent.SessionStart).count(), speed);

            Map<String, String> placedOn = new ConcurrentHashMap<>();
            AtomicInteger requestsSent = new AtomicInteger();
            AtomicInteger moved = new AtomicInteger();
            List<String> problems = new ArrayList<>();
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
                    System.out.printf(Locale.ROOT, "%6.1fs  new session %s… → %-9s  load now %s%n",
                            e.atMillis() / 1000.0, e.session().substring(0, 8), r.id(), loads(replicas));
                } else if (e instanceof TraceEvent.Query q) {
                    requests.execute(() -> {
                        String home = placedOn.get(q.session());
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
                    requests.execute(() -> {
                        String upstream = call(envoy, "ReleaseSession", e.session());
                        requestsSent.incrementAndGet();
                        if (!upstream.equals(placedOn.get(e.session()))) {
                            moved.incrementAndGet();
                        }
                    });
                }
            });
            requests.shutdown();
            requests.awaitTermination(30, TimeUnit.SECONDS);
            channel.shutdownNow();

            System.out.printf(Locale.ROOT, "%nsessions per replica:%n");
            replicas.all().forEach(r -> System.out.printf(Locale.ROOT, "  %-9s %s %d%n", r.id(),
                    "#".repeat(r.sessions()), r.sessions()));
            System.out.printf(Locale.ROOT, "%n%d requests (Config, AnalyzePlan, ExecutePlan, ReattachExecute, "
                    + "ReleaseExecute, ReleaseSession) for %d sessions; requests that reached a replica other than "
                    + "their session's first: %d%s%n", requestsSent.get(), placedOn.size(), moved.get(),
                    moved.get() == 0 ? " — every session stayed pinned." : " — SESSIONS MOVED.");
            problems.forEach(p -> System.out.println("problem: " + p));
        } finally {
            requests.shutdownNow();
            replicas.close();
        }
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
