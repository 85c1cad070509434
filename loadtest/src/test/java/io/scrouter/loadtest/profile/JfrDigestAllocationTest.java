package io.scrouter.loadtest.profile;

import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real JFR recording, started while a thread had already allocated much more than it allocates during the
 * recording, as {@code bench-profile} starts its recordings with {@code jcmd} after a warm-up.
 */
class JfrDigestAllocationTest {

    private static final int CHUNK = 64 * 1024;
    private static final long BEFORE = 512L << 20;
    private static final long DURING = 32L << 20;

    /** Where allocated arrays go, so that the JIT cannot drop them. */
    private static volatile byte[] sink;

    private static void allocate(long bytes) {
        for (long done = 0; done < bytes; done += CHUNK) {
            sink = new byte[CHUNK];
        }
    }

    @Test
    void whatAThreadAllocatedBeforeTheRecordingIsNotChargedToTheRecording(@TempDir Path dir) throws Exception {
        CountDownLatch allocatedBefore = new CountDownLatch(1);
        CountDownLatch recording = new CountDownLatch(1);
        CompletableFuture<Void> worker = CompletableFuture.runAsync(() -> {
            allocate(BEFORE);
            allocatedBefore.countDown();
            try {
                recording.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            allocate(DURING);
        }, r -> new Thread(r, "allocating-worker").start());
        allocatedBefore.await();
        Path file = dir.resolve("allocation.jfr");
        try (Recording r = new Recording()) {
            r.enable("jdk.ObjectAllocationSample").with("throttle", "1000/s").withStackTrace();
            r.start();
            recording.countDown();
            worker.join();
            r.stop();
            r.dump(file);
        }

        JfrDigest d = JfrDigest.read(file, List.of());

        assertThat(d.leftOutSamples()).as("threads sampled").isPositive();
        // Nearly all of it: the bytes of the buffer a thread is still filling are counted at its next sample.
        assertThat(d.leftOutBytes()).as("the worker's first sample carries what it allocated before")
                .isGreaterThan(BEFORE * 9 / 10);
        assertThat(d.allocatedBytes()).as("allocation charged to the recording, the worker's %,d bytes in it",
                DURING).isLessThan(BEFORE / 4);
    }
}
