package io.scrouter.extproc.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the duration syntax used in configuration: {@code 250ms}, {@code 1s}, {@code 30m}, {@code 2h}. */
public final class Durations {

    private static final Pattern SIMPLE = Pattern.compile("(\\d+)(ms|s|m|h)");

    private Durations() {
    }

    public static Duration parse(String key, String text) {
        if (text == null) {
            throw new ConfigException(key, "is missing; give a duration such as 250ms, 1s, 30m or 2h");
        }
        Matcher m = SIMPLE.matcher(text.trim());
        if (!m.matches()) {
            throw new ConfigException(key, "must be a duration such as 250ms, 1s, 30m or 2h, got '" + text + "'");
        }
        try {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            };
        } catch (NumberFormatException | ArithmeticException e) {
            throw new ConfigException(key, "is far too large, got '" + text + "'");
        }
    }
}
