package io.scrouter.loadtest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line options of every loadtest command, in one place: {@code --key value}, {@code --key=value},
 * switches without a value, and options that may be repeated. Anything else is rejected with a message that
 * names it and shows the command's usage.
 */
public final class Args {

    private final Map<String, List<String>> values = new HashMap<>();
    private final Set<String> present = new HashSet<>();
    private final String usage;

    public Args(String[] args, Set<String> known, String usage) {
        this(args, known, Set.of(), Set.of(), usage);
    }

    /**
     * @param known      options that take a value
     * @param switches   options without a value ({@code --no-header})
     * @param repeatable options of {@code known} that may be given more than once ({@code --set a=1 --set b=2})
     */
    public Args(String[] args, Set<String> known, Set<String> switches, Set<String> repeatable, String usage) {
        this.usage = usage;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'; usage: " + usage);
            }
            int eq = a.indexOf('=');
            String key = eq > 0 ? a.substring(2, eq) : a.substring(2);
            if (switches.contains(key)) {
                if (eq > 0) {
                    throw new IllegalArgumentException("--" + key + " takes no value; usage: " + usage);
                }
                present.add(key);
                continue;
            }
            if (!known.contains(key)) {
                throw new IllegalArgumentException("unknown option --" + key + "; usage: " + usage);
            }
            String value;
            if (eq > 0) {
                value = a.substring(eq + 1);
            } else {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + key + " needs a value; usage: " + usage);
                }
                value = args[++i];
            }
            List<String> list = values.computeIfAbsent(key, k -> new ArrayList<>());
            if (!list.isEmpty() && !repeatable.contains(key)) {
                throw new IllegalArgumentException("--" + key + " given twice; usage: " + usage);
            }
            list.add(value);
        }
    }

    public String usage() {
        return usage;
    }

    public boolean has(String switchName) {
        return present.contains(switchName);
    }

    public String get(String key, String fallback) {
        List<String> v = values.get(key);
        return v == null ? fallback : v.get(v.size() - 1);
    }

    public String required(String key, String what) {
        String v = get(key, null);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("--" + key + " " + what + " is required; usage: " + usage);
        }
        return v;
    }

    /** Every value of a repeatable option, in order; empty when not given. */
    public List<String> all(String key) {
        return values.getOrDefault(key, List.of());
    }

    /** A comma-separated list, or {@code fallback} when the option is absent. */
    public List<String> list(String key, List<String> fallback) {
        String v = get(key, null);
        if (v == null) {
            return fallback;
        }
        List<String> out = new ArrayList<>();
        for (String part : v.split(",")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--" + key + " needs at least one name");
        }
        return out;
    }

    public long getLong(String key, long fallback) {
        String v = get(key, null);
        try {
            return v == null ? fallback : Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + " must be a whole number, got '" + v + "'");
        }
    }

    /** A whole number in [min, max]. */
    public long getLong(String key, long fallback, long min, long max) {
        long n = getLong(key, fallback);
        if (n < min || n > max) {
            throw new IllegalArgumentException("--" + key + " must be between " + min + " and " + max + ", got " + n);
        }
        return n;
    }

    public double getDouble(String key, double fallback) {
        String v = get(key, null);
        try {
            double d = v == null ? fallback : Double.parseDouble(v.trim());
            if (!Double.isFinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + " must be a number, got '" + v + "'");
        }
    }

    /** Seeds as {@code 4-10}, {@code 1,2,3} or a mix ({@code 1-3,7}). */
    public List<Long> seeds(String key, String fallback) {
        String v = get(key, fallback);
        List<Long> out = new ArrayList<>();
        try {
            for (String part : v.split(",")) {
                String p = part.trim();
                int dash = p.indexOf('-', 1);
                if (dash > 0) {
                    long from = Long.parseLong(p.substring(0, dash).trim());
                    long to = Long.parseLong(p.substring(dash + 1).trim());
                    if (to < from || to - from > 10_000) {
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
            throw new IllegalArgumentException("--" + key + " must be seeds such as 4-10 or 1,2,3, got '" + v + "'");
        }
        return out;
    }
}
