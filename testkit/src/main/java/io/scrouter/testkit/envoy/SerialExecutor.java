package io.scrouter.testkit.envoy;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * Runs one stream's events one at a time, in order, on a shared pool: Envoy handles a stream's events on one
 * worker thread, so the stand-in's per-stream state needs no locks either.
 */
final class SerialExecutor implements Executor {

    private final Executor pool;
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean running;

    SerialExecutor(Executor pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (queue) {
            queue.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        pool.execute(this::drain);
    }

    private void drain() {
        while (true) {
            Runnable next;
            synchronized (queue) {
                next = queue.poll();
                if (next == null) {
                    running = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException e) {
                // One failed event must not stop the stream's later events; the stream records its own errors.
                Thread t = Thread.currentThread();
                t.getUncaughtExceptionHandler().uncaughtException(t, e);
            }
        }
    }
}
