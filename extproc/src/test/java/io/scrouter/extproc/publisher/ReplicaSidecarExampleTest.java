package io.scrouter.extproc.publisher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.scrouter.extproc.Main;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParseResult;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes example of a replica with the publisher sidecar must stay runnable: its arguments and
 * environment are ones the publish command accepts, the grace period covers the drain, and its copy of the
 * Spark settings equals {@code spark/spark-defaults.conf}.
 */
class ReplicaSidecarExampleTest {

    private static List<JsonNode> documents() throws Exception {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = yaml.getFactory().createParser(
                Files.readString(Path.of("..", "istio", "examples", "spark-connect-replicas.yaml")))) {
            yaml.readValues(parser, JsonNode.class).forEachRemaining(docs::add);
        }
        return docs;
    }

    private static JsonNode kind(List<JsonNode> docs, String kind) {
        return docs.stream().filter(d -> d.path("kind").asText().equals(kind)).findFirst().orElseThrow();
    }

    @Test
    void publisherSidecarUsesOnlyFlagsAndVariablesThePublishCommandReads() throws Exception {
        JsonNode pod = kind(documents(), "StatefulSet").at("/spec/template/spec");
        JsonNode publisher = null;
        for (JsonNode c : pod.get("containers")) {
            if (c.get("name").asText().equals("scrouter-publisher")) {
                publisher = c;
            }
        }
        assertThat(publisher).isNotNull();
        List<String> args = new ArrayList<>();
        publisher.get("args").forEach(a -> args.add(a.asText()));
        assertThat(args.get(0)).isEqualTo("publish");

        Map<String, String> env = new HashMap<>();
        publisher.get("env").forEach(e -> env.put(e.get("name").asText(),
                e.has("value") ? e.get("value").asText() : "from-secret"));
        StringWriter errors = new StringWriter();
        ParseResult parsed = Main.commandLine(env, new PrintWriter(new StringWriter()), new PrintWriter(errors))
                .parseArgs(args.toArray(String[]::new));
        assertThat(errors.toString()).isEmpty();
        PublisherCommand publish = parsed.subcommand().commandSpec().commandLine().getCommand();
        assertThat(publish.grpc).isEqualTo("$(POD_IP):15002");
        assertThat(publish.id).isEqualTo("$(POD_NAME)");
        assertThat(publish.metricsUrl).isEqualTo("http://$(POD_IP):4040");
        assertThat(env).containsKey("SCROUTER_REDIS_ADDRESS");

        assertThat(pod.get("terminationGracePeriodSeconds").asLong()).isGreaterThan(publish.drainFor.toSeconds());
        assertThat(publish.ttl).isGreaterThanOrEqualTo(publish.interval.multipliedBy(2));
    }

    @Test
    void sparkSettingsInTheExampleEqualTheDocumentedFile() throws Exception {
        String shipped = kind(documents(), "ConfigMap").at("/data/spark-defaults.conf").asText();
        String file = Files.readString(Path.of("..", "spark", "spark-defaults.conf"));
        assertThat(shipped.strip()).isEqualTo(file.strip());
        assertThat(file).contains("spark.executor.maxNumFailures", "spark.executor.failuresValidityInterval",
                "spark.task.maxFailures", "spark.stage.maxConsecutiveAttempts", "spark.driver.maxResultSize");
    }
}
