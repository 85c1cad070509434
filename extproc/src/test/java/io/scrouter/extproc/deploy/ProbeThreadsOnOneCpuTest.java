package io.scrouter.extproc.deploy;

import io.scrouter.extproc.testing.Await;
import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.spark.SparkRestStandIn;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A router on one CPU (a small node, a pod or a process pinned to one core) probes its replicas' Spark REST API
 * without starting a thread per answer. The JDK's HTTP client completes each {@code sendAsync} on
 * {@code CompletableFuture}'s default executor, which on one or two CPUs is a new thread per task unless the
 * common pool has at least two threads ({@code Main.keepAsyncCompletionsOnPooledThreads}). The router runs as its
 * own JVM, told it has one CPU; the count is the JVM's own {@code jvm_threads_started_total}.
 */
class ProbeThreadsOnOneCpuTest {

    private static final Duration PROBE_INTERVAL = Duration.ofMillis(100);
    /** Probe answers counted between the two readings: one thread each would be unmistakable. */
    private static final int ANSWERS = 40;

    @TempDir
    Path dir;

    @Test
    void probeAnswersDoNotStartThreads() throws Exception {
        try (SparkRestStandIn a = new SparkRestStandIn(); SparkRestStandIn b = new SparkRestStandIn()) {
            int port = RedisProcess.freePort();
            int metricsPort = RedisProcess.freePort();
            Path config = dir.resolve("router.yaml");
            Files.writeString(config, """
                    server: {bindAddress: 127.0.0.1, port: %d, drainPeriod: 0s}
                    pool: {static: [{id: r0, grpc: "127.0.0.1:24031", metricsUrl: "%s"},
                                    {id: r1, grpc: "127.0.0.1:24032", metricsUrl: "%s"}]}
                    probe: {interval: %dms}
                    metrics: {bindAddress: 127.0.0.1, port: %d}
                    """.formatted(port, a.url(), b.url(), PROBE_INTERVAL.toMillis(), metricsPort));
            LongSupplier answers = () -> a.requestsServed() + b.requestsServed();
            // Each probe round asks every replica twice (executors, active stages) once the application id is
            // known; the deadline allows thirty times the rounds the answers need.
            Duration patience = PROBE_INTERVAL.multipliedBy(30L * ANSWERS / 4);
            try (ExtProcProcess router = ExtProcProcess.start(config, port, dir.resolve("router.log"), Map.of(),
                    List.of("-XX:ActiveProcessorCount=1"))) {
                // The first rounds start what is started once: the HTTP client's selector, the pooled threads.
                Await.until("the first probe rounds", patience, () -> answers.getAsLong() >= 4 * 3);
                long threadsBefore = threadsStarted(metricsPort);
                long answersBefore = answers.getAsLong();
                Await.until(ANSWERS + " more probe answers", patience,
                        () -> answers.getAsLong() >= answersBefore + ANSWERS);
                long threadsAfter = threadsStarted(metricsPort);
                long answered = answers.getAsLong() - answersBefore;
                assertThat(threadsAfter - threadsBefore)
                        .as("threads started while the replicas answered %d probe requests", answered)
                        .isLessThan(answered / 4);
            }
        }
    }

    private static long threadsStarted(int metricsPort) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String page = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body();
        return page.lines().filter(l -> l.startsWith("jvm_threads_started_total "))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.indexOf(' ') + 1).trim()))
                .findFirst().orElseThrow(() -> new AssertionError("no jvm_threads_started_total in:\n" + page));
    }
}
