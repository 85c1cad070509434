package io.scrouter.extproc.publisher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.scrouter.extproc.config.Durations;
import org.junit.jupiter.api.Test;

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
        Map<String, String> flags = PublisherCommand.parse(args.subList(1, args.size()).toArray(String[]::new), env);
        assertThat(flags).containsEntry("grpc", "$(POD_IP):15002").containsEntry("id", "$(POD_NAME)")
                .containsEntry("metrics-url", "http://$(POD_IP):4040");
        assertThat(env).containsKey("SCROUTER_REDIS_ADDRESS");

        long drainSeconds = Durations.parse("--drain-for", flags.get("drain-for")).toSeconds();
        assertThat(pod.get("terminationGracePeriodSeconds").asLong()).isGreaterThan(drainSeconds);
        long ttl = Durations.parse("--ttl", flags.get("ttl")).toMillis();
        long interval = Durations.parse("--interval", flags.get("interval")).toMillis();
        assertThat(ttl).isGreaterThanOrEqualTo(2 * interval);
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
