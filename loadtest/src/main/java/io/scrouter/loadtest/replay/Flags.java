package io.scrouter.loadtest.replay;

import java.util.ArrayList;
import java.util.List;

/**
 * Switches without a value ({@code --print-config}, {@code --no-header}), taken out of the arguments before
 * the rest goes to {@link io.scrouter.loadtest.Args}, which reads {@code --key value} pairs only.
 */
final class Flags {

    private final List<String> rest = new ArrayList<>();
    private final List<String> present = new ArrayList<>();

    Flags(String[] argv, String... switches) {
        List<String> known = List.of(switches);
        for (String a : argv) {
            if (a.startsWith("--") && known.contains(a.substring(2))) {
                present.add(a.substring(2));
            } else {
                rest.add(a);
            }
        }
    }

    boolean has(String name) {
        return present.contains(name);
    }

    String[] rest() {
        return rest.toArray(String[]::new);
    }
}
