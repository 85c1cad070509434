package io.scrouter.extproc.redis;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.ByteProcessor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Redis's wire protocol, version 2 (RESP2), on Netty: commands as arrays of bulk strings, and a decoder that turns
 * the bytes read into one message per reply. For the router's {@link PipelinedConnection} and for the pipelined
 * client {@code bench-redis-clients} measures.
 */
public final class Resp2 {

    /** A {@code -ERR ...} reply: Redis refused the command. */
    public static final class ErrorReply extends IOException {
        ErrorReply(String message) {
            super(message);
        }
    }

    /** Netty passes no null messages on: a nil reply travels as this; {@link #value} turns it back into null. */
    private enum Nil { NIL }

    private static final Object INCOMPLETE = new Object();

    private Resp2() {
    }

    /** One command, as Redis reads it from a client. */
    public static ByteBuf encode(ByteBufAllocator alloc, String... words) {
        ByteBuf b = alloc.buffer();
        b.writeByte('*').writeCharSequence(Integer.toString(words.length), StandardCharsets.US_ASCII);
        b.writeShort(('\r' << 8) | '\n');
        for (String w : words) {
            byte[] bytes = w.getBytes(StandardCharsets.UTF_8);
            b.writeByte('$').writeCharSequence(Integer.toString(bytes.length), StandardCharsets.US_ASCII);
            b.writeShort(('\r' << 8) | '\n');
            b.writeBytes(bytes).writeShort(('\r' << 8) | '\n');
        }
        return b;
    }

    /**
     * A decoded message as the caller gets it: a String (simple or bulk), a Long, a List of these, or null (nil). An
     * {@link ErrorReply} is a message too; callers fail with it instead.
     */
    public static Object value(Object message) {
        return message == Nil.NIL ? null : message;
    }

    /** RESP2 replies, one message each; a reply split across reads waits for the rest. */
    public static final class Decoder extends ByteToMessageDecoder {
        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            while (in.isReadable()) {
                int start = in.readerIndex();
                Object reply = parse(in);
                if (reply == INCOMPLETE) {
                    in.readerIndex(start);
                    return;
                }
                out.add(reply == null ? Nil.NIL : reply);
            }
        }
    }

    private static Object parse(ByteBuf in) {
        String line = line(in);
        if (line == null || line.isEmpty()) {
            return line == null ? INCOMPLETE : protocolError(line);
        }
        String rest = line.substring(1);
        switch (line.charAt(0)) {
            case '+':
                return rest;
            case '-':
                return new ErrorReply(rest);
            case ':':
                return Long.parseLong(rest);
            case '$': {
                int length = Integer.parseInt(rest);
                if (length < 0) {
                    return null;
                }
                if (in.readableBytes() < length + 2) {
                    return INCOMPLETE;
                }
                String s = in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
                in.skipBytes(length + 2);
                return s;
            }
            case '*': {
                int n = Integer.parseInt(rest);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    Object item = parse(in);
                    if (item == INCOMPLETE) {
                        return INCOMPLETE;
                    }
                    items.add(item);
                }
                return items;
            }
            default:
                return protocolError(line);
        }
    }

    /** Thrown out of the decoder: the pipeline's exception handler closes the connection with it. */
    private static Object protocolError(String line) {
        throw new IllegalStateException("not a RESP2 reply: '" + line + "'");
    }

    /** The next line without its CRLF, consumed; null when the line is not complete yet. */
    private static String line(ByteBuf in) {
        int lf = in.forEachByte(ByteProcessor.FIND_LF);
        if (lf < 0) {
            return null;
        }
        int length = lf - in.readerIndex() - 1;
        String line = length < 0 ? "" : in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.readerIndex(lf + 1);
        return line;
    }
}
