package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a command that walks every thread of a process ({@code taskset -a}, {@code chrt -a}). A thread that ends during
 * the walk fails the call, so it is tried again, up to five times.
 */
final class AllThreads {

    private static final int ATTEMPTS = 5;

    private AllThreads() {
    }

    /** Runs {@code command}; if every attempt fails, throws with {@code failure} and the last attempt's output. */
    static void run(List<String> command, String failure) throws IOException, InterruptedException {
        String output = "";
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException(failure + ": " + output.trim());
    }
}
