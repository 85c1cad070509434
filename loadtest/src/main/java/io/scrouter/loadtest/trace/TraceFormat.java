package io.scrouter.loadtest.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and writes traces as JSON Lines, one event per line (see loadtest/README.md, "Trace format"):
 *
 * <pre>
 * {"t":0,"ev":"start","session":"3f1c…","router":0}
 * {"t":850,"ev":"query","session":"3f1c…","tasks":8,"taskMs":300,"rpcs":["AnalyzePlan","ExecutePlan"]}
 * {"t":9120,"ev":"end","session":"3f1c…"}
 * </pre>
 *
 * A line-per-event text format can be cut, concatenated, grepped and streamed, and any language writes it.
 */
public final class TraceFormat {

    private static final ObjectMapper JSON = new ObjectMapper();

    private TraceFormat() {
    }

    public static String line(TraceEvent e) {
        ObjectNode o = JSON.createObjectNode();
        o.put("t", e.atMillis());
        // Java 17: no pattern matching in switch yet, so an instanceof chain over the sealed type.
        if (e instanceof TraceEvent.SessionStart s) {
            o.put("ev", "start");
            o.put("session", s.session());
            o.put("router", s.router());
        } else if (e instanceof TraceEvent.Query q) {
            o.put("ev", "query");
            o.put("session", q.session());
            o.put("tasks", q.tasks());
            o.put("taskMs", q.taskMillis());
            ArrayNode rpcs = o.putArray("rpcs");
            q.rpcs().forEach(rpcs::add);
        } else {
            o.put("ev", "end");
            o.put("session", e.session());
        }
        return o.toString();
    }

    public static TraceEvent parse(String line) {
        JsonNode n;
        try {
            n = JSON.readTree(line);
        } catch (IOException e) {
            throw new IllegalArgumentException("trace line is not JSON: " + line, e);
        }
        long t = required(n, "t", line).asLong();
        String session = required(n, "session", line).asText();
        String kind = required(n, "ev", line).asText();
        return switch (kind) {
            case "start" -> new TraceEvent.SessionStart(t, session, n.path("router").asInt(0));
            case "query" -> {
                List<String> rpcs = new ArrayList<>();
                required(n, "rpcs", line).forEach(r -> rpcs.add(r.asText()));
                yield new TraceEvent.Query(t, session, required(n, "tasks", line).asInt(),
                        required(n, "taskMs", line).asLong(), rpcs);
            }
            case "end" -> new TraceEvent.SessionEnd(t, session);
            default -> throw new IllegalArgumentException("unknown event kind '" + kind
                    + "' (expected start, query or end) in: " + line);
        };
    }

    public static void write(List<? extends TraceEvent> events, Writer out) {
        try {
            for (TraceEvent e : events) {
                out.write(line(e));
                out.write('\n');
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static List<TraceEvent> read(Reader in) {
        List<TraceEvent> events = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(in)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    events.add(parse(line));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return events;
    }

    private static JsonNode required(JsonNode n, String field, String line) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("trace line lacks \"" + field + "\": " + line);
        }
        return v;
    }
}
