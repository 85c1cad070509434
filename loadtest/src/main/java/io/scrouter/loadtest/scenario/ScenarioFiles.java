package io.scrouter.loadtest.scenario;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Finds and reads scenario files (YAML or JSON), resolves {@code extends: <name>} (the named file first, this
 * one merged over it: mappings key by key, lists and values replaced), then applies command-line overrides
 * ({@code clients.loop=open}, {@code cluster.replicas=[4,8,16]}), and validates the result.
 *
 * <p>The built-in scenarios are the files of {@code loadtest/scenarios/} in the repository; a name without a
 * path means {@code <that directory>/<name>.yaml}.
 */
public final class ScenarioFiles {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES));
    private static final ObjectMapper JSON = new ObjectMapper();

    private ScenarioFiles() {
    }

    /**
     * The directory of the built-in scenarios: {@code -Dscrouter.scenarios=DIR} if set, else
     * {@code loadtest/scenarios} from the repository root, else {@code scenarios} from the loadtest module.
     */
    public static Path directory() {
        String set = System.getProperty("scrouter.scenarios");
        if (set != null) {
            return Path.of(set);
        }
        for (Path p : List.of(Path.of("loadtest", "scenarios"), Path.of("scenarios"))) {
            if (Files.isDirectory(p)) {
                return p;
            }
        }
        throw new IllegalStateException("cannot find the built-in scenarios: run from the repository root (they are "
                + "in loadtest/scenarios/) or set -Dscrouter.scenarios=DIR");
    }

    /** Names of the built-in scenarios, sorted. */
    public static List<String> builtIn() {
        try (Stream<Path> files = Files.list(directory())) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml"))
                    .map(n -> n.substring(0, n.length() - 5)).sorted().toList();
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + directory() + ": " + e.getMessage());
        }
    }

    /** Reads a scenario by built-in name or file path, with {@code key=value} overrides applied in order. */
    public static ScenarioSpec load(String nameOrPath, List<String> overrides) {
        JsonNode tree = resolve(nameOrPath, new HashSet<>());
        for (String o : overrides) {
            override(tree, o);
        }
        return ScenarioSpec.read(tree);
    }

    public static ScenarioSpec load(String nameOrPath) {
        return load(nameOrPath, List.of());
    }

    /** Reads a scenario from text (YAML or JSON), resolving {@code extends} against the built-in directory. */
    public static ScenarioSpec parse(String text, List<String> overrides) {
        JsonNode tree = parseTree(text, "(text)");
        tree = withBase(tree, new HashSet<>());
        for (String o : overrides) {
            override(tree, o);
        }
        return ScenarioSpec.read(tree);
    }

    /** The spec as YAML text, every key written out; {@link #parse} reads it back to an equal spec. */
    public static String toYaml(ScenarioSpec spec) {
        try {
            return YAML.writeValueAsString(spec.toTree());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static Path fileOf(String nameOrPath) {
        boolean isPath = nameOrPath.contains("/") || nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml")
                || nameOrPath.endsWith(".json");
        if (isPath) {
            return Path.of(nameOrPath);
        }
        if (!nameOrPath.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw new IllegalArgumentException("'" + nameOrPath + "' is neither a scenario name nor a file path");
        }
        return directory().resolve(nameOrPath + ".yaml");
    }

    private static JsonNode resolve(String nameOrPath, Set<String> seen) {
        Path file = fileOf(nameOrPath);
        if (!Files.isRegularFile(file)) {
            String known = "";
            try {
                known = "; built-in scenarios: " + String.join(", ", builtIn());
            } catch (IllegalStateException ignored) {
                // no built-in directory here: say only what is missing
            }
            throw new IllegalArgumentException("no scenario file " + file + known);
        }
        if (!seen.add(file.toAbsolutePath().normalize().toString())) {
            throw new IllegalArgumentException("scenario " + file + " extends itself (through 'extends')");
        }
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read scenario " + file + ": " + e.getMessage());
        }
        return withBase(parseTree(text, file.toString()), seen);
    }

    private static JsonNode withBase(JsonNode tree, Set<String> seen) {
        JsonNode base = tree.get("extends");
        if (base == null || base.isNull()) {
            return tree;
        }
        if (!base.isTextual()) {
            throw new ScenarioException("extends", "must name a scenario");
        }
        JsonNode merged = resolve(base.asText(), seen);
        merge((ObjectNode) merged, (ObjectNode) tree);
        ((ObjectNode) merged).remove("extends");
        return merged;
    }

    private static JsonNode parseTree(String text, String source) {
        JsonNode tree;
        try {
            tree = (text.stripLeading().startsWith("{") ? JSON : YAML).readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("scenario " + source + " is not valid YAML or JSON: "
                    + e.getOriginalMessage() + " (line " + e.getLocation().getLineNr() + ")");
        }
        if (tree == null || !tree.isObject()) {
            throw new IllegalArgumentException("scenario " + source + " must be a mapping of keys (name, clients, cluster, ...)");
        }
        return tree;
    }

    /** {@code over} into {@code base}: mappings merged key by key, anything else replaced. */
    static void merge(ObjectNode base, ObjectNode over) {
        for (Iterator<Map.Entry<String, JsonNode>> it = over.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode old = base.get(e.getKey());
            if (old instanceof ObjectNode o && e.getValue() instanceof ObjectNode n) {
                merge(o, n);
            } else {
                base.set(e.getKey(), e.getValue().deepCopy());
            }
        }
    }

    /** Applies {@code a.b.c=value}; the value is read as YAML, so numbers, lists and durations all work. */
    static void override(JsonNode tree, String assignment) {
        int eq = assignment.indexOf('=');
        if (eq <= 0) {
            throw new IllegalArgumentException("override '" + assignment + "' must look like key.path=value, for "
                    + "example cluster.routers=4");
        }
        String key = assignment.substring(0, eq).trim();
        String text = assignment.substring(eq + 1).trim();
        // Team and group names (teams.team-a.think) may have '-' and '_'.
        if (!key.matches("[A-Za-z][A-Za-z0-9_-]*(\\.[A-Za-z][A-Za-z0-9_-]*)*")) {
            throw new IllegalArgumentException("override key '" + key + "' must be dotted names such as clients.think.median");
        }
        JsonNode value;
        try {
            value = text.isEmpty() ? JSON.nullNode() : YAML.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("override " + key + ": value '" + text + "' is not valid YAML");
        }
        String[] parts = key.split("\\.");
        ObjectNode at = (ObjectNode) tree;
        List<String> walked = new ArrayList<>();
        for (int i = 0; i < parts.length - 1; i++) {
            walked.add(parts[i]);
            JsonNode next = at.get(parts[i]);
            if (next == null || next.isNull()) {
                next = at.putObject(parts[i]);
            } else if (!next.isObject()) {
                throw new ScenarioException(String.join(".", walked), "is a value, not a mapping: cannot set " + key);
            }
            at = (ObjectNode) next;
        }
        at.set(parts[parts.length - 1], value == null ? JSON.nullNode() : value);
    }
}
