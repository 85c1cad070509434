package io.scrouter.loadtest.cli;

import io.scrouter.extproc.config.ConfigException;
import io.scrouter.extproc.config.Durations;
import io.scrouter.extproc.config.RouterConfig;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.time.Duration;
import java.util.Locale;

/**
 * Range checks of option values, done when a command starts (picocli converts the type, not the range). A value
 * out of range is a usage error: one line naming the option, the range it accepts and what was given, exit 2.
 */
public final class Bounds {

    private Bounds() {
    }

    /** {@code value} if it lies in [min, max]; otherwise a usage error of {@code option}. */
    public static int within(CommandSpec spec, String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw outOfRange(spec, option, Integer.toString(value), Integer.toString(min), Integer.toString(max));
        }
        return value;
    }

    /** {@code value} if it lies in [min, max]; otherwise a usage error of {@code option}. */
    public static long within(CommandSpec spec, String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw outOfRange(spec, option, Long.toString(value), Long.toString(min), Long.toString(max));
        }
        return value;
    }

    /** {@code value} if it is finite and lies in [min, max]; otherwise a usage error of {@code option}. */
    public static double within(CommandSpec spec, String option, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            throw outOfRange(spec, option, number(value), number(min), number(max));
        }
        return value;
    }

    /**
     * The routers' {@code redis.followUpGather} as {@code option} gives it, as a setting for their redis section: ""
     * when not given (the router's default), else checked against the router's own range.
     */
    public static String followUpGather(CommandSpec spec, String option, String text) {
        if (text == null) {
            return "";
        }
        Duration d;
        try {
            d = Durations.parse(option, text);
        } catch (ConfigException e) {
            throw new ParameterException(spec.commandLine(), option + " must be a duration such as 1ms or 5ms, not '"
                    + text + "'");
        }
        long max = RouterConfig.Redis.MAX_FOLLOW_UP_GATHER.toMillis();
        if (d.toMillis() > max) {
            throw outOfRange(spec, option, d.toMillis() + "ms", "0ms", max + "ms");
        }
        return "followUpGather: " + d.toMillis() + "ms";
    }

    private static ParameterException outOfRange(CommandSpec spec, String option, String value, String min,
                                                 String max) {
        return new ParameterException(spec.commandLine(),
                option + " must be between " + min + " and " + max + ", not " + value);
    }

    private static String number(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : String.format(Locale.ROOT, "%s", d);
    }
}
