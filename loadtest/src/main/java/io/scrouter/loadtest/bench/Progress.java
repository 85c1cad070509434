package io.scrouter.loadtest.bench;

import java.util.Locale;

/** Progress lines on stderr, each stamped with the seconds since the command started; stdout keeps the results. */
final class Progress {

    private final long start = System.nanoTime();

    void say(String format, Object... args) {
        System.err.printf(Locale.ROOT, "[%6.1fs] %s%n", (System.nanoTime() - start) / 1e9,
                String.format(Locale.ROOT, format, args));
    }
}
