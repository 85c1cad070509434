package io.scrouter.extproc.publisher;

import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code publish} command as operators run it (its own JVM, SIGTERM to stop) against a real redis-server:
 * during the drain it renews about once per interval, not in a loop. Redis's own command statistics count
 * the writes, so nothing in the publisher is trusted to count itself.
 */
class PublisherDrainTest {

    private static final Duration INTERVAL = Duration.ofMillis(200);
    private static final Duration TTL = Duration.ofSeconds(1);
    private static final Duration DRAIN = Duration.ofSeconds(2);

    @TempDir
    Path dir;
    private RedisProcess redis;
    private Process publisher;

    @BeforeEach
    void startRedis() throws IOException {
        redis = RedisProcess.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (publisher != null && publisher.isAlive()) {
            publisher.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        redis.close();
    }

    @Test
    void drainPublishesDrainingRenewsOncePerIntervalThenStops() throws Exception {
        Path log = dir.resolve("publisher.log");
        int metricsPort = RedisProcess.freePort();
        publisher = startPublisher(log, Map.of("SCROUTER_REPLICA_METRICS_PORT", Integer.toString(metricsPort)));
        awaitFirstRenewal(log);
        // Its own /metrics shows the renewals an alert watches (AlertRulesTest checks the rule side).
        String scraped = scrapeAfterARenewal(metricsPort);
        assertThat(scraped).contains("scrouter_publisher_state{replica=\"spark-0\",state=\"warming\"} 1.0")
                .contains("scrouter_publisher_entry_ttl_seconds{replica=\"spark-0\"} 1.0")
                .containsPattern("scrouter_publisher_last_renewal_timestamp_seconds\\{replica=\"spark-0\"} \\d");

        redis.command("CONFIG", "RESETSTAT");
        long signalled = System.nanoTime();
        publisher.destroy(); // SIGTERM
        // Draining is published at the signal; seen here before the drain ends (a busy machine gets the whole
        // drain plus the ttl, after which the entry would have expired anyway).
        long seenBy = signalled + DRAIN.toNanos() + TTL.toNanos() + TimeUnit.SECONDS.toNanos(30);
        while (!redis.command("GET", "scr:replica:spark-0").contains("\"state\":\"draining\"")) {
            assertThat(System.nanoTime()).as("draining published:\n" + Files.readString(log)).isLessThan(seenBy);
            Thread.sleep(INTERVAL.toMillis() / 4);
        }
        // The drain itself, plus JVM shutdown slack on a busy machine.
        boolean exited = publisher.waitFor(DRAIN.toMillis() + 30_000, TimeUnit.MILLISECONDS);
        long drainedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalled);
        Map<String, Long> calls = redis.commandCalls();
        assertThat(exited).as("publisher exits after its drain:\n" + Files.readString(log)).isTrue();

        // One renewal at the signal, then one per interval for the drain, one at its end; at most one more
        // from the serving loop before the signal landed.
        long bound = DRAIN.toMillis() / INTERVAL.toMillis() + 2 + 1;
        assertThat(calls.getOrDefault("psetex", 0L)).as("PSETEX during the drain, all: " + calls)
                .isBetween(2L, bound);
        assertThat(calls.getOrDefault("sadd", 0L)).as("SADD during the drain, all: " + calls)
                .isBetween(2L, bound);
        assertThat(drainedMillis).as("kept renewing for the whole drain").isGreaterThanOrEqualTo(DRAIN.toMillis());
    }

    /** The publisher's /metrics once it counts at least one successful renewal (bounded by the ttl). */
    private String scrapeAfterARenewal(int port) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30) + TTL.toNanos();
        while (true) {
            try {
                String body = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                        "http://127.0.0.1:" + port + "/metrics")).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
                if (body.contains("scrouter_publisher_renewals_total{replica=\"spark-0\",result=\"ok\"}")
                        && !body.contains("result=\"ok\"} 0.0")) {
                    return body;
                }
            } catch (java.io.IOException notYet) {
                // the server is starting
            }
            assertThat(System.nanoTime()).as("publisher metrics within 30 s").isLessThan(deadline);
            Thread.sleep(INTERVAL.toMillis());
        }
    }

    Process startPublisher(Path log, Map<String, String> extraEnv) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        // Closed ports: the replica stays warming, which is all this test needs from readiness.
        ProcessBuilder builder = new ProcessBuilder(java, "-cp", classPath, "io.scrouter.extproc.Main", "publish",
                "--id", "spark-0", "--grpc", "127.0.0.1:" + RedisProcess.freePort(),
                "--metrics-url", "http://127.0.0.1:" + RedisProcess.freePort(),
                "--ttl", TTL.toMillis() + "ms", "--interval", INTERVAL.toMillis() + "ms",
                "--drain-for", DRAIN.toMillis() + "ms")
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("SCROUTER_"));
        Map<String, String> env = new HashMap<>(extraEnv);
        env.put("SCROUTER_REDIS_ADDRESS", redis.address());
        builder.environment().putAll(env);
        return builder.start();
    }

    void awaitFirstRenewal(Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!"1".equals(redis.command("EXISTS", "scr:replica:spark-0").replace(":", ""))) {
            assertThat(publisher.isAlive()).as("publisher running:\n" + Files.readString(log)).isTrue();
            assertThat(System.nanoTime()).as("first renewal within 60 s:\n" + Files.readString(log))
                    .isLessThan(deadline);
            Thread.sleep(INTERVAL.toMillis() / 2);
        }
    }
}
