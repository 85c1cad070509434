package io.scrouter.loadtest.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.ByteProcessor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The pipelined alternative to Redisson that {@code bench-redis-clients} measures: one Netty channel, commands
 * written as they come without waiting for earlier replies, replies matched to callers in order. No pool, no
 * per-command timer, no retry, no reconnect: a measuring instrument for the client's share of a round trip, not a
 * client the router could use as it is.
 */
final class PipelinedResp implements AutoCloseable {

    /** A {@code -ERR ...} reply. */
    static final class ErrorReply extends IOException {
        ErrorReply(String message) {
            super(message);
        }
    }

    private static final Object INCOMPLETE = new Object();

    private final Channel channel;
    /** Callers waiting for replies, oldest first; touched only on the channel's event loop. */
    private final ArrayDeque<CompletableFuture<Object>> waiting = new ArrayDeque<>();

    private PipelinedResp(Channel channel) {
        this.channel = channel;
    }

    static PipelinedResp connect(EventLoopGroup loops, String host, int port) throws InterruptedException {
        PipelinedResp[] made = new PipelinedResp[1];
        Channel ch = new Bootstrap().group(loops).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new Decoder(), new SimpleChannelInboundHandler<Object>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, Object reply) {
                                CompletableFuture<Object> caller = made[0].waiting.poll();
                                if (caller == null) {
                                    return;
                                }
                                if (reply instanceof ErrorReply e) {
                                    caller.completeExceptionally(e);
                                } else {
                                    caller.complete(reply == Nil.NIL ? null : reply);
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                IOException closed = new IOException("connection to Redis closed");
                                for (CompletableFuture<Object> f; (f = made[0].waiting.poll()) != null; ) {
                                    f.completeExceptionally(closed);
                                }
                            }
                        });
                    }
                })
                .connect(host, port).sync().channel();
        made[0] = new PipelinedResp(ch);
        return made[0];
    }

    /** Sends one command; the reply is a String (simple or bulk), Long, List or null (nil). */
    CompletableFuture<Object> call(String... words) {
        CompletableFuture<Object> reply = new CompletableFuture<>();
        ByteBuf command = encode(channel, words);
        if (channel.eventLoop().inEventLoop()) {
            send(reply, command);
        } else {
            channel.eventLoop().execute(() -> send(reply, command));
        }
        return reply;
    }

    private void send(CompletableFuture<Object> reply, ByteBuf command) {
        waiting.add(reply);
        channel.writeAndFlush(command);
    }

    private static ByteBuf encode(Channel channel, String... words) {
        ByteBuf b = channel.alloc().buffer();
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

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }

    /** RESP2 replies, one message each; a reply split across reads waits for the rest. */
    private static final class Decoder extends ByteToMessageDecoder {
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

    /** Netty does not pass null messages on: a nil reply travels as this and is handed to the caller as null. */
    private enum Nil { NIL }

    private static Object parse(ByteBuf in) {
        String line = line(in);
        if (line == null) {
            return INCOMPLETE;
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
                throw new IllegalStateException("not a RESP2 reply: " + line);
        }
    }

    /** The next line without its CRLF, consumed; null when the line is not complete yet. */
    private static String line(ByteBuf in) {
        int lf = in.forEachByte(ByteProcessor.FIND_LF);
        if (lf < 0) {
            return null;
        }
        String line = in.toString(in.readerIndex(), lf - 1 - in.readerIndex(), StandardCharsets.UTF_8);
        in.readerIndex(lf + 1);
        return line;
    }
}
