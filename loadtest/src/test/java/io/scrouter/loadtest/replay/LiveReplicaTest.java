package io.scrouter.loadtest.replay;

import io.scrouter.scorer.LoadSample;
import io.scrouter.scorer.probe.SparkRestProbe;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class LiveReplicaTest {

    private static final long MS = 1_000_000;

    @Test
    void queriesQueueFifoOnTheSlotsAndFinishAtTheirTasksScheduledEnd() throws Exception {
        try (LiveReplica replica = new LiveReplica("replica-a", "127.0.0.1:15002", 2, 0)) {
            AtomicLong firstDone = new AtomicLong();
            AtomicLong secondDone = new AtomicLong();
            long before = System.nanoTime();
            replica.submit(4, 100 * MS, firstDone::set);   // two waves on two slots
            replica.submit(1, 100 * MS, secondDone::set);  // waits behind all four
            long after = System.nanoTime();

            assertThat(replica.sample()).isEqualTo(new LoadSample(2, 3, 2));
            replica.advance(after + 1_000 * MS);

            assertThat(firstDone.get()).isBetween(before + 200 * MS, after + 200 * MS);
            assertThat(secondDone.get()).isBetween(before + 300 * MS, after + 300 * MS);
            assertThat(replica.utilisation()).isZero();
        }
    }

    @Test
    void theRoutersOwnProbeReadsTheLoadFromTheRestEndpoint() throws Exception {
        try (LiveReplica replica = new LiveReplica("replica-a", "127.0.0.1:15002", 4, 0)) {
            replica.submit(6, 60_000 * MS);
            SparkRestProbe probe = new SparkRestProbe(HttpClient.newHttpClient(), replica.metricsUrl(),
                    Duration.ofSeconds(2));

            LoadSample read = probe.sample().get(5, TimeUnit.SECONDS);

            assertThat(read).isEqualTo(new LoadSample(4, 2, 4));
            assertThat(replica.probes()).isEqualTo(1);
        }
    }

    @Test
    void sessionsCountPlacementsAndReleases() throws Exception {
        try (LiveReplica replica = new LiveReplica("replica-a", "127.0.0.1:15002", 1, 0)) {
            replica.sessionPlaced();
            replica.sessionPlaced();
            replica.sessionEnded();
            assertThat(replica.sessions()).isEqualTo(1);
        }
    }
}
