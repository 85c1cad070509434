package io.scrouter.scorer.probe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.scrouter.scorer.LoadSample;

import java.io.IOException;

/**
 * Reads load figures out of Spark's monitoring REST API ({@code /api/v1}) responses.
 *
 * <ul>
 *   <li>{@code /applications}: a Spark Connect server runs exactly one application; its id is the first.</li>
 *   <li>{@code /applications/{id}/executors}: slots and running tasks are summed over entries with
 *       {@code isActive}; in local mode the single {@code driver} entry holds them, on a cluster the driver
 *       entry reports zero slots and the executors hold them.</li>
 *   <li>{@code /applications/{id}/stages?status=active}: a stage's waiting tasks are
 *       {@code numTasks - numActiveTasks - numCompletedIndices} (indices, not task attempts, so retried and
 *       speculative tasks are not counted twice).</li>
 * </ul>
 * Unknown fields are ignored (Spark adds fields between versions); a missing required field is an error.
 */
public final class SparkRestParser {

    private static final ObjectMapper JSON = new ObjectMapper();

    private SparkRestParser() {
    }

    public static String applicationId(byte[] applicationsJson) throws IOException {
        JsonNode apps = JSON.readTree(applicationsJson);
        if (apps == null || !apps.isArray() || apps.isEmpty()) {
            throw new IOException("Spark REST /applications listed no application");
        }
        return requiredText(apps.get(0), "id");
    }

    /** Returns {activeTasks, maxTasks} summed over active executors. */
    public static long[] executorSlots(byte[] executorsJson) throws IOException {
        JsonNode executors = requireArray(JSON.readTree(executorsJson), "/executors");
        long active = 0;
        long slots = 0;
        for (JsonNode e : executors) {
            if (!e.path("isActive").asBoolean(false)) {
                continue;
            }
            active += requiredLong(e, "activeTasks");
            slots += requiredLong(e, "maxTasks");
        }
        return new long[] {active, slots};
    }

    public static long pendingTasks(byte[] activeStagesJson) throws IOException {
        JsonNode stages = requireArray(JSON.readTree(activeStagesJson), "/stages?status=active");
        long pending = 0;
        for (JsonNode s : stages) {
            if (!"ACTIVE".equals(s.path("status").asText("ACTIVE"))) {
                continue;
            }
            long waiting = requiredLong(s, "numTasks") - requiredLong(s, "numActiveTasks")
                    - requiredLong(s, "numCompletedIndices");
            pending += Math.max(0, waiting);
        }
        return pending;
    }

    public static LoadSample sample(byte[] executorsJson, byte[] activeStagesJson) throws IOException {
        long[] slots = executorSlots(executorsJson);
        return new LoadSample(slots[0], pendingTasks(activeStagesJson), slots[1]);
    }

    private static JsonNode requireArray(JsonNode node, String endpoint) throws IOException {
        if (node == null || !node.isArray()) {
            throw new IOException("Spark REST " + endpoint + " did not return a JSON array");
        }
        return node;
    }

    private static long requiredLong(JsonNode node, String field) throws IOException {
        JsonNode v = node.get(field);
        if (v == null || !v.canConvertToLong()) {
            throw new IOException("Spark REST entry lacks numeric field '" + field + "'");
        }
        return Math.max(0, v.asLong());
    }

    private static String requiredText(JsonNode node, String field) throws IOException {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IOException("Spark REST entry lacks text field '" + field + "'");
        }
        return v.asText();
    }
}
