package io.scrouter.extproc.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.testkit.redis.RedisProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code SCROUTER_LOG_FORMAT=json} as a log pipeline reads it, from the router and the publisher run as their
 * own JVMs: every line on stdout is one JSON object with an ISO-8601 {@code @timestamp}, and the event's
 * fields ({@code replica}, {@code session}, {@code outcome}) are top-level fields, not text in the message.
 */
class JsonLogLinesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static List<JsonNode> jsonLines(Path log) throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode node = JSON.readTree(line);
            assertThat(node.isObject()).as("one JSON object per line: %s", line).isTrue();
            Instant.parse(node.path("@timestamp").asText()); // ISO-8601, or this throws
            assertThat(node.path("level").asText()).isNotEmpty();
            assertThat(node.path("message").asText()).as("no field inside the message text")
                    .doesNotContainPattern("\\b(replica|session|outcome)=");
            lines.add(node);
        }
        return lines;
    }

    private static JsonNode event(List<JsonNode> lines, String message) {
        return lines.stream().filter(l -> l.path("message").asText().startsWith(message)).findFirst()
                .orElseThrow(() -> new AssertionError("no '" + message + "' line in " + lines));
    }

    @Test
    void publisherLinesCarryTheReplicaAsAField() throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            Path out = dir.resolve("publisher.out");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            ProcessBuilder builder = new ProcessBuilder(java, "-cp", classPath, "io.scrouter.extproc.Main", "publish",
                    "--id", "spark-7", "--grpc", "127.0.0.1:" + RedisProcess.freePort(),
                    "--metrics-url", "http://127.0.0.1:" + RedisProcess.freePort(),
                    "--ttl", "1s", "--interval", "200ms", "--drain-for", "400ms")
                    .redirectOutput(out.toFile()).redirectError(dir.resolve("publisher.err").toFile());
            builder.environment().keySet().removeIf(name -> name.startsWith("SCROUTER_"));
            builder.environment().putAll(Map.of("SCROUTER_REDIS_ADDRESS", redis.address(),
                    "SCROUTER_LOG_FORMAT", "json"));
            Process publisher = builder.start();
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!"1".equals(redis.command("EXISTS", "scr:replica:spark-7").replace(":", ""))) {
                    assertThat(System.nanoTime()).as("first renewal within 60 s").isLessThan(deadline);
                    Thread.sleep(100);
                }
                publisher.destroy(); // SIGTERM: draining, then drained
                assertThat(publisher.waitFor(60, TimeUnit.SECONDS)).isTrue();
            } finally {
                publisher.destroyForcibly();
            }
            List<JsonNode> lines = jsonLines(out);
            // Start, SIGTERM and end of the drain: each event arrives (a field the encoder cannot write would drop
            // its whole line) with the replica as a field and durations as numbers.
            JsonNode publishing = event(lines, "publishing");
            assertThat(publishing.path("replica").asText()).isEqualTo("spark-7");
            assertThat(publishing.path("intervalMillis").isNumber()).isTrue();
            assertThat(publishing.path("intervalMillis").asLong()).isEqualTo(200);
            assertThat(event(lines, "draining").path("replica").asText()).isEqualTo("spark-7");
            assertThat(event(lines, "drained").path("ttlMillis").asLong()).isEqualTo(1000);
        }
    }

    @Test
    void routerDecisionLinesCarrySessionOutcomeAndReplicaAsFields() throws Exception {
        int port = RedisProcess.freePort();
        Path config = dir.resolve("router.yaml");
        Files.writeString(config, """
                server: {bindAddress: 127.0.0.1, port: %d, drainPeriod: 0s}
                pool: {static: [{id: spark-3, grpc: "127.0.0.1:24031"}]}
                """.formatted(port));
        Path out = dir.resolve("router.out");
        try (ExtProcProcess router = ExtProcProcess.start(config, port, out,
                Map.of("SCROUTER_LOG_FORMAT", "json", "SCROUTER_LOG_LEVEL", "DEBUG"))) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            try {
                String session = UUID.randomUUID().toString();
                assertThat(ExtProcClient.upstreamOf(new ExtProcClient(channel, Patience.ANSWER)
                        .send(ExtProcClient.sparkCall("ExecutePlan", session)))).isEqualTo("127.0.0.1:24031");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!Files.readString(out).contains(session)) {
                    assertThat(System.nanoTime()).as("decision logged within 30 s").isLessThan(deadline);
                    Thread.sleep(100);
                }
                JsonNode decided = jsonLines(out).stream()
                        .filter(l -> l.path("session").asText().equals(session)).findFirst().orElseThrow();
                assertThat(decided.path("message").asText()).isEqualTo("decided");
                // The pool's one replica has no metrics URL, so no load figures: placed on session counts.
                assertThat(decided.path("outcome").asText()).isEqualTo("placed_degraded");
                assertThat(decided.path("replica").asText()).isEqualTo("spark-3");
                assertThat(decided.path("level").asText()).isEqualTo("DEBUG");
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
