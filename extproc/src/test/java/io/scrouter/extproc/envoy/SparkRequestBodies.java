package io.scrouter.extproc.envoy;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * gRPC-framed request bodies shaped like Spark Connect's: {@code session_id} (field 1) first, then other
 * fields. Built by hand so the envoy tests need no Spark protos; the spark-e2e tests use the real client.
 */
public final class SparkRequestBodies {

    private SparkRequestBodies() {
    }

    /** A framed message: session_id, then a user_context-like field 2 and {@code padding} filler bytes. */
    public static byte[] framed(String sessionId, int padding) {
        ByteArrayOutputStream message = new ByteArrayOutputStream();
        byte[] id = sessionId.getBytes(StandardCharsets.UTF_8);
        message.write(0x0A);
        writeVarint(message, id.length);
        message.writeBytes(id);
        byte[] filler = new byte[padding];
        new Random(padding).nextBytes(filler);
        message.write(0x12);
        writeVarint(message, filler.length);
        message.writeBytes(filler);
        return frame(0, message.toByteArray());
    }

    static byte[] frame(int flag, byte[] message) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(flag);
        int n = message.length;
        out.write(n >>> 24);
        out.write(n >>> 16);
        out.write(n >>> 8);
        out.write(n);
        out.writeBytes(message);
        return out.toByteArray();
    }

    static void writeVarint(ByteArrayOutputStream out, int value) {
        int v = value;
        while ((v & ~0x7F) != 0) {
            out.write((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.write(v);
    }

    public static ProcessingRequest body(byte[] bytes, boolean endOfStream) {
        return ProcessingRequest.newBuilder()
                .setRequestBody(HttpBody.newBuilder().setBody(ByteString.copyFrom(bytes)).setEndOfStream(endOfStream))
                .build();
    }

    /** {@code bytes} cut at the given offsets into body messages; the last one ends the stream. */
    static List<ProcessingRequest> split(byte[] bytes, int[] cuts) {
        List<ProcessingRequest> out = new ArrayList<>();
        int from = 0;
        for (int cut : cuts) {
            out.add(body(java.util.Arrays.copyOfRange(bytes, from, cut), false));
            from = cut;
        }
        out.add(body(java.util.Arrays.copyOfRange(bytes, from, bytes.length), true));
        return out;
    }
}
