package io.scrouter.extproc.runtime;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads of the service's background loops: daemon, so that they never keep a stopped process alive, and
 * named, so that a thread dump says whose they are.
 */
public final class DaemonThreads {

    private DaemonThreads() {
    }

    /** Threads named {@code name}, or {@code name-2}, {@code name-3}, ... when the factory makes several. */
    public static ThreadFactory named(String name) {
        AtomicInteger made = new AtomicInteger();
        return task -> {
            int n = made.incrementAndGet();
            Thread t = new Thread(task, n == 1 ? name : name + "-" + n);
            t.setDaemon(true);
            return t;
        };
    }
}
