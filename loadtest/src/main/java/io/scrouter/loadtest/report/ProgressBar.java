package io.scrouter.loadtest.report;

import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-line progress bar on stderr, redrawn at most every 200 ms and only after the run has taken a
 * couple of seconds, so short runs print nothing. Thread-safe: workers add their progress concurrently.
 */
public final class ProgressBar {

    private static final int WIDTH = 30;

    private final String label;
    private final long total;
    private final PrintStream out;
    private final long startNanos = System.nanoTime();
    private final AtomicLong done = new AtomicLong();
    private volatile long lastDrawNanos;
    private volatile boolean drawn;

    public ProgressBar(String label, long total, PrintStream out) {
        this.label = label;
        this.total = Math.max(1, total);
        this.out = out;
    }

    public void add(long units) {
        long d = done.addAndGet(units);
        long now = System.nanoTime();
        if (now - startNanos < 2_000_000_000L || now - lastDrawNanos < 200_000_000L) {
            return;
        }
        lastDrawNanos = now;
        draw(d, now);
    }

    private synchronized void draw(long d, long now) {
        double share = Math.min(1.0, (double) d / total);
        int filled = (int) Math.round(share * WIDTH);
        double elapsed = (now - startNanos) / 1e9;
        String eta = share > 0.01 ? String.format("%.0fs left", elapsed / share - elapsed) : "";
        out.printf("\r%s [%s%s] %3.0f%% %.0fs %s   ", label, "#".repeat(filled), ".".repeat(WIDTH - filled),
                share * 100, elapsed, eta);
        out.flush();
        drawn = true;
    }

    /** Ends the line if a bar was drawn. */
    public void finish() {
        if (drawn) {
            draw(total, System.nanoTime());
            out.println();
        }
    }
}
