package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Keeps the load generator off the servers' core: servers and Redis on core 0, the client on core 1, with
 * {@code taskset} when it exists and the machine has two cores or more. Without it every process floats, and
 * {@link #describe()} says so, because the figures then include the client competing with the servers.
 */
final class Cores {

    private static final Path TASKSET = Path.of("/usr/bin/taskset");
    static final int SERVER_CORE = 0;
    static final int CLIENT_CORE = 1;

    private final boolean pinning;
    private final String why;

    private Cores(boolean pinning, String why) {
        this.pinning = pinning;
        this.why = why;
    }

    /** Whether the servers run on {@link #SERVER_CORE} alone (and the client elsewhere). */
    boolean pinned() {
        return pinning;
    }

    static Cores detect() {
        int online = onlineCores();
        if (!Files.isExecutable(TASKSET)) {
            return new Cores(false, "taskset not found: nothing pinned; client, servers and Redis share the "
                    + online + " cores");
        }
        if (online < 2) {
            return new Cores(false, "one core only: nothing pinned");
        }
        return new Cores(true, "pinned with taskset: servers and redis-server on core " + SERVER_CORE
                + ", the client on core " + CLIENT_CORE + " (" + online + " cores online)");
    }

    /** Cores the kernel runs, whatever this process's own affinity (which {@code availableProcessors} reflects). */
    static int onlineCores() {
        try {
            String online = Files.readString(Path.of("/sys/devices/system/cpu/online")).trim();
            int n = 0;
            for (String part : online.split(",")) {
                String[] range = part.split("-");
                n += range.length == 1 ? 1 : Integer.parseInt(range[1]) - Integer.parseInt(range[0]) + 1;
            }
            return n;
        } catch (IOException | RuntimeException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }

    boolean pinning() {
        return pinning;
    }

    String describe() {
        return why;
    }

    /** Pins this JVM, every thread it has now and (by inheritance) every thread it starts later. */
    void pinClient() throws IOException, InterruptedException {
        pin(ProcessHandle.current().pid(), CLIENT_CORE);
    }

    /** Pins a server process and all its threads; threads it starts later inherit the affinity. */
    void pinServer(long pid) throws IOException, InterruptedException {
        pin(pid, SERVER_CORE);
    }

    private void pin(long pid, int core) throws IOException, InterruptedException {
        if (!pinning) {
            return;
        }
        AllThreads.run(List.of(TASKSET.toString(), "-a", "-p", "-c", Integer.toString(core), Long.toString(pid)),
                "taskset could not pin process " + pid + " to core " + core);
    }
}
