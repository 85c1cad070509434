package io.scrouter.loadtest.scenario;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as scenario files write them: {@code 250ms}, {@code 1.5s}, {@code 30m}, {@code 2h}. */
public final class DurationText {

    private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)");

    private DurationText() {
    }

    /** Milliseconds of {@code text}, or -1 when it is not a duration in one of the forms above. */
    public static long parseMillis(String text) {
        Matcher m = FORM.matcher(text.trim());
        if (!m.matches()) {
            return -1;
        }
        double n = Double.parseDouble(m.group(1));
        double unit = switch (m.group(2)) {
            case "ms" -> 1;
            case "s" -> 1_000;
            case "m" -> 60_000;
            default -> 3_600_000;
        };
        double ms = n * unit;
        return ms > Long.MAX_VALUE / 2 ? -1 : Math.round(ms);
    }

    /** The shortest exact form: {@code 90s} stays seconds, {@code 1800000} ms becomes {@code 30m}. */
    public static String format(long millis) {
        if (millis % 3_600_000 == 0 && millis != 0) {
            return millis / 3_600_000 + "h";
        }
        if (millis % 60_000 == 0 && millis != 0) {
            return millis / 60_000 + "m";
        }
        if (millis % 1_000 == 0 && millis != 0) {
            return millis / 1_000 + "s";
        }
        if (millis % 100 == 0 && millis > 1_000) {
            return String.format(Locale.ROOT, "%.1fs", millis / 1000.0);
        }
        return millis + "ms";
    }
}
