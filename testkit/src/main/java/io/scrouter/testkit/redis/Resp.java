package io.scrouter.testkit.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One RESP command to one loopback Redis or Sentinel process, with the whole reply parsed: simple and bulk
 * strings as String, integers as Long, arrays as List, nil as null; an error reply is thrown as
 * {@link RespError} carrying the server's text (so a test can read {@code MOVED} or {@code NOAUTH}).
 *
 * <p>Set-up and checks use this rather than a full client on purpose: a full client follows the master or
 * the slot owner, and these checks must ask one server in particular.
 */
public final class Resp {

    /** Every reply on loopback comes at once; a server that takes longer than this is stopped or hung. */
    private static final int READ_TIMEOUT_MILLIS = 3000;

    private Resp() {
    }

    /** An error reply from the server ({@code -ERR ...}, {@code -MOVED ...}, {@code -NOAUTH ...}). */
    public static final class RespError extends IOException {
        public RespError(String serverText) {
            super(serverText);
        }
    }

    public static Object command(int port, String... words) throws IOException {
        return authenticated(port, null, words);
    }

    /** Sends {@code AUTH password} first when a password is given (not null), on the same connection. */
    public static Object authenticated(int port, String password, String... words) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream());
            if (password != null) {
                out.write(encode("AUTH", password));
                out.flush();
                read(in);
            }
            out.write(encode(words));
            out.flush();
            return read(in);
        }
    }

    static byte[] encode(String... words) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + words.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String w : words) {
            byte[] bytes = w.getBytes(StandardCharsets.UTF_8);
            b.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            b.writeBytes(bytes);
            b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        return b.toByteArray();
    }

    static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new RespError(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] data = in.readNBytes(n);
                line(in);
                return new String(data, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("unexpected reply type " + (type < 0 ? "EOF" : "'" + (char) type + "'"));
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        return sb.toString();
    }
}
