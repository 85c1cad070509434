package io.scrouter.loadtest.replay;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.loadtest.LoadTools;
import io.scrouter.loadtest.trace.TraceEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** A short trace (well under a second at its speed) against the real service in this JVM. */
class ServiceReplayTest {

    @Test
    void everySessionIsPlacedOnASimulatedReplicaStaysThereAndItsQueriesRun() throws Exception {
        List<TraceEvent> trace = new ArrayList<>();
        for (int s = 0; s < 6; s++) {
            String id = UUID.randomUUID().toString();
            trace.add(new TraceEvent.SessionStart(s * 10L, id, 0));
            trace.add(new TraceEvent.Query(100 + s * 10L, id, 4, 200, List.of("AnalyzePlan", "ExecutePlan",
                    "ReleaseExecute")));
            trace.add(new TraceEvent.SessionEnd(2_000 + s * 10L, id));
        }
        trace.sort((a, b) -> Long.compare(a.atMillis(), b.atMillis()));

        try (SimulatedReplicas replicas = new SimulatedReplicas(new ReplicaLayout(2, 15002, 0), 4);
             RouterServer router = RouterServer.start(ConfigLoader.parse(
                     "server: {bindAddress: 127.0.0.1, port: 0}\nprobe: {interval: 100ms}\n"
                             + replicas.staticPoolYaml(), Map.of()))) {
            assertThat(replicas.awaitProbed(1, 10_000)).isTrue();
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
            try {
                ReplayStats stats = new ServiceReplay(new ExtProcClient(channel, LoadTools.ANSWER_WAIT), replicas, 10).run(trace, 10_000);

                assertThat(stats.placements.values().stream().mapToInt(a -> a.get()).sum()).isEqualTo(6);
                assertThat(stats.routedElsewhere()).isZero();
                assertThat(stats.errors()).isZero();
                assertThat(stats.sortedSlowdowns()).hasSize(6);
                // Nothing finishes faster than alone on an idle replica.
                assertThat(stats.sortedSlowdowns()[0]).isGreaterThanOrEqualTo(0.99);
                assertThat(replicas.all()).allSatisfy(r -> assertThat(r.sessions()).isZero());
                assertThat(ReplayReport.render(stats, replicas.ids())).contains("| replica-a |", "p99 (ms)");
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
