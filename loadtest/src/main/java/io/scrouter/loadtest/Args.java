package io.scrouter.loadtest;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** {@code --key value} and {@code --key=value} command-line options, checked against the keys a command knows. */
public final class Args {

    private final Map<String, String> values = new HashMap<>();

    public Args(String[] args, Set<String> known, String usage) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'; usage: " + usage);
            }
            String key;
            String value;
            int eq = a.indexOf('=');
            if (eq > 0) {
                key = a.substring(2, eq);
                value = a.substring(eq + 1);
            } else {
                key = a.substring(2);
                if (!known.contains(key)) {
                    throw new IllegalArgumentException("unknown option --" + key + "; usage: " + usage);
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + key + " needs a value; usage: " + usage);
                }
                value = args[++i];
            }
            if (!known.contains(key)) {
                throw new IllegalArgumentException("unknown option --" + key + "; usage: " + usage);
            }
            values.put(key, value);
        }
    }

    public String get(String key, String fallback) {
        return values.getOrDefault(key, fallback);
    }

    public long getLong(String key, long fallback) {
        String v = values.get(key);
        try {
            return v == null ? fallback : Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + " must be a whole number, got '" + v + "'");
        }
    }

    public double getDouble(String key, double fallback) {
        String v = values.get(key);
        try {
            return v == null ? fallback : Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + key + " must be a number, got '" + v + "'");
        }
    }
}
