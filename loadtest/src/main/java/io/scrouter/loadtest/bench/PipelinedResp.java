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
import io.scrouter.extproc.redis.Resp2;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * The pipelined alternative to Redisson that {@code bench-redis-clients} measures: one Netty channel, commands
 * written as they come without waiting for earlier replies, replies matched to callers in order. No pool, no
 * per-command timer, no retry, no reconnect: a measuring instrument for the client's share of a round trip. The
 * router's own pipelined client, with what a request path needs, is {@code PipelinedConnection}; both speak
 * {@link Resp2}.
 */
final class PipelinedResp implements AutoCloseable {

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
                        c.pipeline().addLast(new Resp2.Decoder(), new SimpleChannelInboundHandler<Object>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, Object reply) {
                                CompletableFuture<Object> caller = made[0].waiting.poll();
                                if (caller == null) {
                                    return;
                                }
                                if (reply instanceof Resp2.ErrorReply e) {
                                    caller.completeExceptionally(e);
                                } else {
                                    caller.complete(Resp2.value(reply));
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
        ByteBuf command = Resp2.encode(channel.alloc(), words);
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

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }
}
