package io.scrouter.extproc.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A typed, validating view of one YAML mapping. Every read names the full key in its error, and
 * {@link #rejectUnknownKeys()} catches typos such as {@code polInterval} that would otherwise be silently
 * ignored and leave a default in force.
 */
final class Section {

    private final String path;
    private final ObjectNode node;
    private final Set<String> read = new HashSet<>();

    Section(String path, JsonNode node) {
        this.path = path;
        if (node == null || node.isNull() || node.isMissingNode()) {
            this.node = JsonNodeFactory.instance.objectNode();
        } else if (node.isObject()) {
            this.node = (ObjectNode) node;
        } else {
            throw new ConfigException(path.isEmpty() ? "(root)" : path, "must be a mapping, got " + node.getNodeType());
        }
    }

    String key(String name) {
        return path.isEmpty() ? name : path + "." + name;
    }

    /** The names of this mapping's entries, in file order (for mappings whose keys are names, not settings). */
    List<String> names() {
        List<String> out = new ArrayList<>();
        node.fieldNames().forEachRemaining(out::add);
        read.addAll(out);
        return out;
    }

    boolean has(String name) {
        read.add(name);
        JsonNode v = node.get(name);
        return v != null && !v.isNull();
    }

    Section section(String name) {
        read.add(name);
        return new Section(key(name), node.get(name));
    }

    List<Section> list(String name) {
        read.add(name);
        JsonNode v = node.get(name);
        List<Section> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            throw new ConfigException(key(name), "must be a list, got " + v.getNodeType());
        }
        for (int i = 0; i < v.size(); i++) {
            out.add(new Section(key(name) + "[" + i + "]", v.get(i)));
        }
        return out;
    }

    String string(String name, String fallback) {
        read.add(name);
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return fallback;
        }
        if (!v.isValueNode()) {
            throw new ConfigException(key(name), "must be a plain value, got " + v.getNodeType());
        }
        return v.asText();
    }

    List<String> stringList(String name) {
        read.add(name);
        JsonNode v = node.get(name);
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (v.isTextual()) {
            for (String part : v.asText().split(",")) {
                if (!part.isBlank()) {
                    out.add(part.trim());
                }
            }
            return out;
        }
        if (!v.isArray()) {
            throw new ConfigException(key(name), "must be a list of strings, got " + v.getNodeType());
        }
        for (JsonNode item : v) {
            if (!item.isValueNode()) {
                throw new ConfigException(key(name), "must be a list of strings");
            }
            out.add(item.asText());
        }
        return out;
    }

    String requiredString(String name) {
        String v = string(name, null);
        if (v == null || v.isBlank()) {
            throw new ConfigException(key(name), "is required");
        }
        return v;
    }

    int integer(String name, int fallback, int min, int max) {
        long v = longValue(name, fallback, min, max);
        return (int) v;
    }

    long longValue(String name, long fallback, long min, long max) {
        read.add(name);
        JsonNode v = node.get(name);
        long result;
        if (v == null || v.isNull()) {
            result = fallback;
        } else if (v.canConvertToLong() && v.isIntegralNumber()) {
            result = v.asLong();
        } else if (v.isTextual() && v.asText().trim().matches("-?\\d{1,18}")) {
            result = Long.parseLong(v.asText().trim());
        } else {
            throw new ConfigException(key(name), "must be a whole number, got '" + v.asText() + "'");
        }
        if (result < min || result > max) {
            throw new ConfigException(key(name), "must be between " + min + " and " + max + ", got " + result);
        }
        return result;
    }

    double decimal(String name, double fallback, double min, double max) {
        read.add(name);
        JsonNode v = node.get(name);
        double result;
        if (v == null || v.isNull()) {
            result = fallback;
        } else if (v.isNumber()) {
            result = v.asDouble();
        } else {
            try {
                result = Double.parseDouble(v.asText().trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(key(name), "must be a number, got '" + v.asText() + "'");
            }
        }
        if (!(result >= min && result <= max)) {
            throw new ConfigException(key(name), "must be between " + min + " and " + max + ", got " + result);
        }
        return result;
    }

    Duration duration(String name, Duration fallback, Duration min, Duration max) {
        String text = string(name, null);
        Duration d = text == null ? fallback : Durations.parse(key(name), text);
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new ConfigException(key(name), "must be between " + min.toMillis() + "ms and "
                    + max.toMillis() + "ms, got " + d.toMillis() + "ms");
        }
        return d;
    }

    boolean bool(String name, boolean fallback) {
        String v = string(name, null);
        if (v == null) {
            return fallback;
        }
        return switch (v.trim().toLowerCase()) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> throw new ConfigException(key(name), "must be true or false, got '" + v + "'");
        };
    }

    void rejectUnknownKeys() {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!read.contains(name)) {
                throw new ConfigException(key(name), "is not a known setting; check its spelling against the "
                        + "configuration reference in README.md");
            }
        }
    }
}
