package io.scrouter.extproc.deploy;

import java.util.concurrent.TimeUnit;

/** Stopping the processes a test started: politely first, so they can flush their logs. */
final class Processes {

    private Processes() {
    }

    static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
