package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Stop-the-world pauses from a JVM's {@code -Xlog:gc} file ({@code ... Pause Young (Normal) ... 3.456ms}): every
 * line that names a pause and ends with its duration.
 */
final class GcPauses {

    private static final Pattern PAUSE = Pattern.compile("\\bPause\\b.*?(\\d+(?:\\.\\d+)?)ms\\s*$");

    private GcPauses() {
    }

    /** The JVM option that writes such a file: ZGC and Shenandoah name their pauses under {@code gc+phases}. */
    static String option(Path file) {
        return "-Xlog:gc,gc+phases:file=" + file.toAbsolutePath();
    }

    static List<Double> millis(String log) {
        return pauses(log, line -> true);
    }

    /**
     * The collector the JVM chose ({@code Using G1}, {@code Using Serial}, ...): a JVM that sees one CPU, as a
     * process pinned to one core does, picks Serial, not G1.
     */
    static String collector(Path file) {
        try {
            for (String line : Files.readAllLines(file)) {
                int at = line.indexOf("Using ");
                if (at >= 0) {
                    return line.substring(at + "Using ".length()).trim();
                }
            }
        } catch (IOException e) {
            return "unknown";
        }
        return "unknown";
    }

    /** The young collections' pauses only: full collections (a heap histogram forces them) left out. */
    static List<Double> young(String log) {
        return pauses(log, line -> line.contains("Pause Young"));
    }

    private static List<Double> pauses(String log, Predicate<String> lines) {
        List<Double> out = new ArrayList<>();
        for (String line : log.split("\r?\n")) {
            Matcher m = PAUSE.matcher(line);
            if (lines.test(line) && m.find()) {
                out.add(Double.parseDouble(m.group(1)));
            }
        }
        return out;
    }

    static List<Double> read(Path file) {
        try {
            return millis(Files.readString(file));
        } catch (IOException e) {
            return List.of();
        }
    }

    /** "n pauses, p50 x ms, p99 y ms, max z ms" (nearest rank). */
    static String summary(List<Double> pauses) {
        if (pauses.isEmpty()) {
            return "no pause";
        }
        List<Double> v = new ArrayList<>(pauses);
        Collections.sort(v);
        return String.format(Locale.ROOT, "%d pauses, p50 %.2f ms, p99 %.2f ms, max %.2f ms", v.size(), rank(v, 0.5),
                rank(v, 0.99), v.get(v.size() - 1));
    }

    private static double rank(List<Double> sorted, double q) {
        int r = (int) Math.ceil(q * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, r - 1)));
    }
}
