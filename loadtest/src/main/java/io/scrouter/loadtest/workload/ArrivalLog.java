package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceFormat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * A load tester's record of their sessions, read from one of two forms:
 * <ul>
 *   <li>the JSON Lines trace format of {@code loadtest trace} (session starts, queries with tasks and task
 *       time, ends), which is also what a recorder in front of real clients would write;</li>
 *   <li>CSV lines {@code time,session[,event[,tasks,taskMs]]}: time in epoch milliseconds or ISO-8601,
 *       event {@code start} (the default), {@code query} or {@code end}; a header line is skipped.</li>
 * </ul>
 * Times are made relative to the first event.
 */
public final class ArrivalLog {

    private ArrivalLog() {
    }

    public static List<TraceEvent> read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no log file " + file);
        }
        String text = Files.readString(file);
        String first = text.stripLeading();
        List<TraceEvent> events = first.startsWith("{") ? TraceFormat.read(new StringReader(text)) : csv(text, file);
        if (events.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no events");
        }
        events = new ArrayList<>(events);
        events.sort(Comparator.comparingLong(TraceEvent::atMillis));
        long t0 = events.get(0).atMillis();
        List<TraceEvent> out = new ArrayList<>(events.size());
        for (TraceEvent e : events) {
            long t = e.atMillis() - t0;
            if (e instanceof TraceEvent.SessionStart s) {
                out.add(new TraceEvent.SessionStart(t, s.session(), s.router()));
            } else if (e instanceof TraceEvent.Query q) {
                out.add(new TraceEvent.Query(t, q.session(), q.tasks(), q.taskMillis(), q.rpcs()));
            } else {
                out.add(new TraceEvent.SessionEnd(t, e.session()));
            }
        }
        return out;
    }

    private static List<TraceEvent> csv(String text, Path file) {
        List<TraceEvent> out = new ArrayList<>();
        String[] lines = text.split("\\R");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s*,\\s*");
            if (i == 0 && !f[0].isEmpty() && !Character.isDigit(f[0].charAt(0))) {
                continue; // header
            }
            String where = file + " line " + (i + 1) + ": ";
            if (f.length < 2) {
                throw new IllegalArgumentException(where + "expected time,session[,event[,tasks,taskMs]]");
            }
            long t = time(f[0], where);
            String event = f.length > 2 ? f[2].toLowerCase(Locale.ROOT) : "start";
            switch (event) {
                case "start" -> out.add(new TraceEvent.SessionStart(t, f[1], 0));
                case "end" -> out.add(new TraceEvent.SessionEnd(t, f[1]));
                case "query" -> {
                    if (f.length < 5) {
                        throw new IllegalArgumentException(where + "a query needs tasks and taskMs");
                    }
                    try {
                        out.add(new TraceEvent.Query(t, f[1], Integer.parseInt(f[3]), Long.parseLong(f[4]), List.of()));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(where + "tasks and taskMs must be whole numbers");
                    }
                }
                default -> throw new IllegalArgumentException(where + "event must be start, query or end, got '"
                        + f[2] + "'");
            }
        }
        return out;
    }

    private static long time(String s, String where) {
        try {
            return s.matches("\\d{1,15}") ? Long.parseLong(s) : Instant.parse(s).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(where + "time must be epoch milliseconds or ISO-8601 "
                    + "(2026-11-30T09:00:00Z), got '" + s + "'");
        }
    }
}
