package io.scrouter.loadtest.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.ArrayList;
import java.util.List;

/**
 * Simulation seeds as given on the command line: {@code 4-10}, {@code 1,2,3} or a mix ({@code 1-3,7}). A range
 * holds at most 10,001 seeds, so a typo such as {@code 1-1000000} is an error rather than a run of days.
 */
public record Seeds(List<Long> values) {

    private static final long MAX_RANGE = 10_000;

    public Seeds {
        values = List.copyOf(values);
    }

    public static Seeds parse(String text) {
        List<Long> out = new ArrayList<>();
        try {
            for (String part : text.split(",", -1)) {
                String p = part.trim();
                int dash = p.indexOf('-', 1);
                if (dash > 0) {
                    long from = Long.parseLong(p.substring(0, dash).trim());
                    long to = Long.parseLong(p.substring(dash + 1).trim());
                    if (to < from || to - from > MAX_RANGE) {
                        throw new NumberFormatException();
                    }
                    for (long s = from; s <= to; s++) {
                        out.add(s);
                    }
                } else {
                    out.add(Long.parseLong(p));
                }
            }
        } catch (NumberFormatException e) {
            throw new TypeConversionException("give seeds such as 4-10, 1,2,3 or 1-3,7 (a range at most "
                    + MAX_RANGE + " long), not '" + text + "'");
        }
        return new Seeds(out);
    }

    /** Converts an option value with {@link #parse}. */
    public static final class Value implements ITypeConverter<Seeds> {
        @Override
        public Seeds convert(String text) {
            return parse(text);
        }
    }

    @Override
    public String toString() {
        return values.toString();
    }
}
