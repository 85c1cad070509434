package io.scrouter.loadtest.fault;

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
 * One RESP command to a loopback Redis or Sentinel, with the whole reply parsed: simple strings and bulk
 * strings as String, integers as Long, arrays as List, nil as null; an error reply is thrown. Used for the
 * Sentinel set-up and for reading what a server holds, where a full client would get in the way (it follows
 * the master; these checks must ask one server in particular).
 */
final class Resp {

    private Resp() {
    }

    static Object command(int port, String... words) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(3000);
            OutputStream out = s.getOutputStream();
            out.write(encode(words));
            out.flush();
            return read(new BufferedInputStream(s.getInputStream()));
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
                throw new IOException("redis error: " + line);
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
