package io.scrouter.extproc;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Just enough of a gRPC client, on a plain blocking socket, to send the warm-up's ext_proc streams: HTTP/2 with prior
 * knowledge (RFC 9113), the request headers as HPACK literals (RFC 7541), each request message as one gRPC frame, and
 * the answers counted, never decoded.
 *
 * <p><b>Why not grpc-java's own client.</b> The warm-up is there to load and compile the server's path. A grpc-java
 * client in the same process loads and compiles the client half of gRPC and of Netty's HTTP/2 codec as well, on the
 * same core, inside the warm-up's time budget. Measured on one core ({@code loadtest/README.md}, "Netty's leak
 * detector, and the warm-up's own client"): 1,000 streams took 2.4–3.5 s with this class against 3.4–4.6 s with
 * grpc-java's client; with four routers and a no-op server starting at once on that core, a router warming up this
 * way had 160 streams answered within the 5 s budget, one with grpc-java's client 16. The CPU per answer once warm
 * was the same either way, to within the host's noise.
 *
 * <p>Not a general client: one connection, used by one thread, streams of a few small messages, each sent whole and
 * half-closed with its last message, then read until every one has ended.
 */
final class WarmupConnection implements Closeable {

    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int DATA = 0x0;
    private static final int HEADERS = 0x1;
    private static final int RST_STREAM = 0x3;
    private static final int SETTINGS = 0x4;
    private static final int PING = 0x6;
    private static final int GOAWAY = 0x7;
    private static final int WINDOW_UPDATE = 0x8;
    private static final int FLAG_END_STREAM = 0x1;
    private static final int FLAG_ACK = 0x1;
    private static final int FLAG_END_HEADERS = 0x4;
    private static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    /** RFC 9113 §6.9.1: the largest window; the answers then never wait on ours. */
    private static final int MAX_WINDOW = Integer.MAX_VALUE;
    /** RFC 9113 §6.9.2: every window starts here until SETTINGS or WINDOW_UPDATE say otherwise. */
    private static final int DEFAULT_WINDOW = 65_535;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final byte[] requestHeaders;
    private final long deadlineNanos;
    /** Which streams (client ids 1, 3, 5, …) have been sent and not ended yet. */
    private final boolean[] open;
    private int openCount;
    /** Which streams got at least one gRPC message back: an answer of the ext_proc service, not just an end. */
    private final boolean[] answeredStreams;
    private int answered;
    private int nextStreamId = 1;
    /** What the server lets us send on the connection (its stream windows outlast a few small messages). */
    private long sendWindow = DEFAULT_WINDOW;

    /**
     * Connects to {@code server} for at most {@code maxStreams} streams; every blocking step gives up at
     * {@code deadlineNanos} ({@link System#nanoTime()}) with an {@link IOException}.
     */
    WarmupConnection(InetSocketAddress server, int maxStreams, long deadlineNanos) throws IOException {
        this.deadlineNanos = deadlineNanos;
        this.open = new boolean[maxStreams];
        this.answeredStreams = new boolean[maxStreams];
        this.requestHeaders = processHeaders(server.getHostString() + ":" + server.getPort());
        socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(server, remainingMillis());
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            out = new BufferedOutputStream(socket.getOutputStream());
            out.write(PREFACE);
            byte[] settings = new byte[6];
            putShort(settings, 0, SETTINGS_INITIAL_WINDOW_SIZE);
            putInt(settings, 2, MAX_WINDOW);
            frame(SETTINGS, 0, 0, settings);
            frame(WINDOW_UPDATE, 0, 0, int32(MAX_WINDOW - DEFAULT_WINDOW));
            out.flush();
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Sends one {@code Process} stream whole: its messages, the last one half-closing it. */
    void send(List<ProcessingRequest> messages) throws IOException {
        int id = nextStreamId;
        int slot = slot(id);
        if (slot < 0) {
            throw new IllegalStateException("more streams than the " + open.length + " this connection was opened for");
        }
        nextStreamId += 2;
        frame(HEADERS, FLAG_END_HEADERS, id, requestHeaders);
        for (int i = 0; i < messages.size(); i++) {
            byte[] message = messages.get(i).toByteArray();
            byte[] grpcFrame = new byte[5 + message.length];
            putInt(grpcFrame, 1, message.length);
            System.arraycopy(message, 0, grpcFrame, 5, message.length);
            while (sendWindow < grpcFrame.length) {
                out.flush();
                readFrame();
            }
            sendWindow -= grpcFrame.length;
            frame(DATA, i == messages.size() - 1 ? FLAG_END_STREAM : 0, id, grpcFrame);
        }
        open[slot] = true;
        openCount++;
    }

    /** Reads until every stream sent has ended (trailers or a reset), whatever it answered. */
    void awaitAllEnded() throws IOException {
        out.flush();
        while (openCount > 0) {
            readFrame();
        }
    }

    private void readFrame() throws IOException {
        socket.setSoTimeout(remainingMillis());
        int length = in.readUnsignedByte() << 16 | in.readUnsignedShort();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        int id = in.readInt() & 0x7fff_ffff;
        byte[] payload = in.readNBytes(length);
        if (payload.length < length) {
            throw new IOException("the warm-up server closed the connection");
        }
        switch (type) {
            case DATA, HEADERS -> {
                if (type == DATA && length >= 5) {
                    answered(id);
                }
                if ((flags & FLAG_END_STREAM) != 0) {
                    ended(id);
                }
            }
            case RST_STREAM -> ended(id);
            case SETTINGS -> {
                if ((flags & FLAG_ACK) == 0) {
                    frame(SETTINGS, FLAG_ACK, 0, new byte[0]);
                    out.flush();
                }
            }
            case PING -> {
                if ((flags & FLAG_ACK) == 0) {
                    frame(PING, FLAG_ACK, 0, payload);
                    out.flush();
                }
            }
            case WINDOW_UPDATE -> {
                if (id == 0 && payload.length == 4) {
                    sendWindow += getInt(payload) & 0x7fff_ffff;
                }
            }
            case GOAWAY -> throw new IOException("the warm-up server sent GOAWAY");
            default -> {
                // PRIORITY, PUSH_PROMISE (never sent to a client that did not enable it), CONTINUATION: nothing to do.
            }
        }
    }

    /**
     * How many streams got an answer: a gRPC message from the service. A stream the server ended without one (an
     * unknown method, a reset) is not counted.
     */
    int answered() {
        return answered;
    }

    private void answered(int id) {
        int slot = slot(id);
        if (slot >= 0 && !answeredStreams[slot]) {
            answeredStreams[slot] = true;
            answered++;
        }
    }

    private void ended(int id) {
        int slot = slot(id);
        if (slot >= 0 && open[slot]) {
            open[slot] = false;
            openCount--;
        }
    }

    /** Where a stream this connection opened (ids 1, 3, 5, …) is kept; -1 for any other id. */
    private int slot(int id) {
        return id % 2 == 1 && id / 2 < open.length ? id / 2 : -1;
    }

    private void frame(int type, int flags, int streamId, byte[] payload) throws IOException {
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.write(type);
        out.write(flags);
        out.write(int32(streamId));
        out.write(payload);
    }

    private int remainingMillis() throws IOException {
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (left <= 0) {
            throw new IOException("out of time for the warm-up");
        }
        return (int) Math.min(Integer.MAX_VALUE, left);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** The gRPC request headers of a {@code Process} call, encoded once; no dynamic table, no Huffman coding. */
    private static byte[] processHeaders(String authority) {
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        literal(block, ":method", "POST");
        literal(block, ":scheme", "http");
        literal(block, ":path", "/" + ExternalProcessorGrpc.getProcessMethod().getFullMethodName());
        literal(block, ":authority", authority);
        literal(block, "content-type", "application/grpc");
        literal(block, "te", "trailers");
        return block.toByteArray();
    }

    /** RFC 7541 §6.2.2: literal header field without indexing, new name. */
    private static void literal(ByteArrayOutputStream block, String name, String value) {
        block.write(0x00);
        string(block, name);
        string(block, value);
    }

    /** RFC 7541 §5.2: a string literal, not Huffman-coded. */
    private static void string(ByteArrayOutputStream block, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
        integer(block, bytes.length);
        block.write(bytes, 0, bytes.length);
    }

    /** RFC 7541 §5.1: an integer with a 7-bit prefix (the string's H bit left 0). */
    private static void integer(ByteArrayOutputStream block, int value) {
        if (value < 0x7f) {
            block.write(value);
            return;
        }
        block.write(0x7f);
        int rest = value - 0x7f;
        while (rest >= 0x80) {
            block.write((rest & 0x7f) | 0x80);
            rest >>>= 7;
        }
        block.write(rest);
    }

    private static byte[] int32(int value) {
        byte[] b = new byte[4];
        putInt(b, 0, value);
        return b;
    }

    private static void putShort(byte[] b, int at, int value) {
        b[at] = (byte) (value >>> 8);
        b[at + 1] = (byte) value;
    }

    private static void putInt(byte[] b, int at, int value) {
        b[at] = (byte) (value >>> 24);
        b[at + 1] = (byte) (value >>> 16);
        b[at + 2] = (byte) (value >>> 8);
        b[at + 3] = (byte) value;
    }

    private static int getInt(byte[] b) {
        return (b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff);
    }
}
