package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceFormat;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** Reads a trace file for a replay, keeping only what fits in the run's wall-time bound. */
final class TraceFile {

    private TraceFile() {
    }

    /**
     * Events due within {@code maxSeconds} of wall time at {@code speed} (later ones are left out), under
     * fresh session ids.
     */
    static List<TraceEvent> read(String file, double speed, double maxSeconds) throws IOException {
        if (file == null) {
            throw new IllegalArgumentException("--trace FILE is required (write one with: loadtest/bin/loadtest "
                    + "trace --scenario burst --out burst.jsonl)");
        }
        List<TraceEvent> all;
        try (Reader in = Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8)) {
            all = TraceFormat.read(in);
        }
        double lastMillis = maxSeconds * 1000 * speed;
        return withFreshSessionIds(all.stream().filter(e -> e.atMillis() <= lastMillis).toList());
    }

    /**
     * The same trace under new random session ids. Spark Connect servers remember closed session ids and
     * routers keep bindings of sessions a trace never ended, so replaying one file twice with its own ids
     * would not start from fresh sessions.
     */
    static List<TraceEvent> withFreshSessionIds(List<TraceEvent> trace) {
        Map<String, String> fresh = new HashMap<>();
        List<TraceEvent> out = new ArrayList<>(trace.size());
        for (TraceEvent e : trace) {
            String id = fresh.computeIfAbsent(e.session(), s -> UUID.randomUUID().toString());
            if (e instanceof TraceEvent.SessionStart s) {
                out.add(new TraceEvent.SessionStart(s.atMillis(), id, s.router()));
            } else if (e instanceof TraceEvent.Query q) {
                out.add(new TraceEvent.Query(q.atMillis(), id, q.tasks(), q.taskMillis(), q.rpcs()));
            } else {
                out.add(new TraceEvent.SessionEnd(e.atMillis(), id));
            }
        }
        return out;
    }

    /** The events of the first {@code max} sessions to start. */
    static List<TraceEvent> firstSessions(List<TraceEvent> trace, long max) {
        Set<String> kept = new HashSet<>();
        return trace.stream().filter(e -> {
            if (e instanceof TraceEvent.SessionStart && kept.size() < max) {
                kept.add(e.session());
            }
            return kept.contains(e.session());
        }).toList();
    }

    static long sessions(List<TraceEvent> trace) {
        return trace.stream().filter(e -> e instanceof TraceEvent.SessionStart).count();
    }
}
