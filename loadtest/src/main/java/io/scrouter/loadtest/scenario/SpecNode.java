package io.scrouter.loadtest.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A typed, validating view of one mapping of a scenario file. Every read names the full key in its error,
 * and {@link #rejectUnknownKeys()} catches a misspelt key that would otherwise leave a default in force.
 */
final class SpecNode {

    private final String path;
    private final ObjectNode node;
    private final Set<String> read = new HashSet<>();

    SpecNode(String path, JsonNode node) {
        this.path = path;
        if (node == null || node.isNull() || node.isMissingNode()) {
            this.node = JsonNodeFactory.instance.objectNode();
        } else if (node.isObject()) {
            this.node = (ObjectNode) node;
        } else {
            throw new ScenarioException(path.isEmpty() ? "(root)" : path, "must be a mapping, got "
                    + node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT));
        }
    }

    String key(String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    private JsonNode value(String name) {
        read.add(name);
        JsonNode v = node.get(name);
        return v == null || v.isNull() ? null : v;
    }

    SpecNode section(String name) {
        return new SpecNode(key(name), value(name));
    }

    List<SpecNode> list(String name) {
        JsonNode v = value(name);
        List<SpecNode> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (!v.isArray()) {
            throw new ScenarioException(key(name), "must be a list");
        }
        for (int i = 0; i < v.size(); i++) {
            out.add(new SpecNode(key(name) + "[" + i + "]", v.get(i)));
        }
        return out;
    }

    /** The keys of this mapping, in file order (all count as read). */
    List<String> names() {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        read.addAll(out);
        return out;
    }

    /** The value under {@code name} as written, or null when absent; for sections another reader checks. */
    JsonNode raw(String name) {
        return value(name);
    }

    /** A list of plain values; a single value counts as a list of one. */
    List<String> strings(String name, List<String> fallback) {
        JsonNode v = value(name);
        if (v == null) {
            return fallback;
        }
        List<String> out = new ArrayList<>();
        Iterable<JsonNode> items = v.isArray() ? v : List.of(v);
        for (JsonNode item : items) {
            if (!item.isValueNode() || item.isNull()) {
                throw new ScenarioException(key(name), "must be a list of plain values such as [team-a, shared]");
            }
            out.add(item.asText());
        }
        return out;
    }

    String string(String name, String fallback) {
        JsonNode v = value(name);
        if (v == null) {
            return fallback;
        }
        if (!v.isValueNode()) {
            throw new ScenarioException(key(name), "must be a plain value");
        }
        return v.asText();
    }

    String oneOf(String name, String fallback, List<String> allowed) {
        String v = string(name, fallback);
        if (!allowed.contains(v)) {
            throw new ScenarioException(key(name), "must be one of " + allowed + ", got '" + v + "'");
        }
        return v;
    }

    boolean bool(String name, boolean fallback) {
        JsonNode v = value(name);
        if (v == null) {
            return fallback;
        }
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        String t = v.asText().trim();
        if (t.equals("true") || t.equals("false")) {
            return Boolean.parseBoolean(t);
        }
        throw new ScenarioException(key(name), "must be true or false, got '" + v.asText() + "'");
    }

    long whole(String name, long fallback, long min, long max) {
        JsonNode v = value(name);
        return v == null ? check(name, fallback, min, max) : wholeOf(key(name), v, min, max);
    }

    private long check(String name, long n, long min, long max) {
        if (n < min || n > max) {
            throw new ScenarioException(key(name), "must be between " + min + " and " + max + ", got " + n);
        }
        return n;
    }

    static long wholeOf(String key, JsonNode v, long min, long max) {
        long n;
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            n = v.asLong();
        } else if (v.isTextual() && v.asText().trim().matches("-?\\d{1,18}")) {
            n = Long.parseLong(v.asText().trim());
        } else {
            throw new ScenarioException(key, "must be a whole number, got '" + v.asText() + "'");
        }
        if (n < min || n > max) {
            throw new ScenarioException(key, "must be between " + min + " and " + max + ", got " + n);
        }
        return n;
    }

    double decimal(String name, double fallback, double min, double max) {
        JsonNode v = value(name);
        double d;
        if (v == null) {
            return fallback; // a fallback may be NaN: "not given"
        } else if (v.isNumber()) {
            d = v.asDouble();
        } else {
            try {
                d = Double.parseDouble(v.asText().trim());
            } catch (NumberFormatException e) {
                throw new ScenarioException(key(name), "must be a number, got '" + v.asText() + "'");
            }
        }
        if (!Double.isFinite(d) || d < min || d > max) {
            throw new ScenarioException(key(name), "must be a number between " + min + " and " + max + ", got " + d);
        }
        return d;
    }

    /** A duration such as {@code 500ms}, {@code 5s}, {@code 30m} or {@code 2h}; a bare number is milliseconds. */
    long millis(String name, long fallback, long min, long max) {
        JsonNode v = value(name);
        long ms;
        if (v == null) {
            ms = fallback;
        } else if (v.isIntegralNumber()) {
            ms = v.asLong();
        } else {
            ms = DurationText.parseMillis(v.asText());
            if (ms < 0) {
                throw new ScenarioException(key(name), "must be a duration such as 500ms, 5s, 30m or 2h, got '"
                        + v.asText() + "'");
            }
        }
        if (ms < min || ms > max) {
            throw new ScenarioException(key(name), "must be between " + DurationText.format(min) + " and "
                    + DurationText.format(max) + ", got " + DurationText.format(ms));
        }
        return ms;
    }

    /** A list of whole numbers; a single number counts as a list of one. */
    List<Long> wholes(String name, List<Long> fallback, long min, long max) {
        JsonNode v = value(name);
        if (v == null) {
            return fallback;
        }
        List<Long> out = new ArrayList<>();
        if (!v.isArray()) {
            out.add(wholeOf(key(name), v, min, max));
            return out;
        }
        for (int i = 0; i < v.size(); i++) {
            out.add(wholeOf(key(name) + "[" + i + "]", v.get(i), min, max));
        }
        return out;
    }

    void rejectUnknownKeys() {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!read.contains(k)) {
                throw new ScenarioException(key(k), "is not a known key here (known: " + new java.util.TreeSet<>(read)
                        + ")");
            }
        }
    }
}
