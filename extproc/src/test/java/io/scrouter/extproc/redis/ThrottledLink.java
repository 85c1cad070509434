package io.scrouter.extproc.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay on loopback to a local port whose replies (towards the client) are held to a byte rate, as over a
 * slow link: a reply then takes its size over the rate to arrive, whatever the machine's speed. Requests pass
 * unthrottled. Its threads end when the relay is closed or either side closes.
 */
final class ThrottledLink implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final long bytesPerSecond;
    private final List<Socket> sockets = new ArrayList<>();

    private ThrottledLink(int targetPort, long bytesPerSecond) throws IOException {
        this.listener = new ServerSocket();
        this.listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.targetPort = targetPort;
        this.bytesPerSecond = bytesPerSecond;
        Thread accept = new Thread(this::accept, "throttled-link-accept");
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                synchronized (sockets) {
                    sockets.add(client);
                    sockets.add(server);
                }
                pump(client, server, Long.MAX_VALUE, "throttled-link-request");
                pump(server, client, bytesPerSecond, "throttled-link-reply");
            } catch (IOException closed) {
                return;
            }
        }
    }

    /** Copies {@code from} to {@code to}, sleeping so that no more than {@code rate} bytes a second pass. */
    private static void pump(Socket from, Socket to, long rate, String name) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            long start = System.nanoTime();
            long sent = 0;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                    sent += n;
                    if (rate != Long.MAX_VALUE) {
                        long due = start + sent * 1_000_000_000L / rate;
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                    }
                }
            } catch (IOException closed) {
                // One side closed: the relay of this connection ends.
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        closeQuietly(listener);
        synchronized (sockets) {
            sockets.forEach(ThrottledLink::closeQuietly);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // Already closed.
        }
    }

    /** The links a test opened, closed together after it. */
    static final class Set implements AutoCloseable {
        private final List<ThrottledLink> open = new ArrayList<>();

        ThrottledLink open(int targetPort, long bytesPerSecond) throws IOException {
            ThrottledLink link = new ThrottledLink(targetPort, bytesPerSecond);
            open.add(link);
            return link;
        }

        @Override
        public void close() {
            open.forEach(ThrottledLink::close);
            open.clear();
        }
    }
}
