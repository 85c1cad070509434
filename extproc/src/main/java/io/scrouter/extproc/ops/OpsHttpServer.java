package io.scrouter.extproc.ops;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.scrouter.extproc.runtime.DaemonThreads;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A small HTTP/1.1 server for the operator endpoints, on the router's event loops: the loops read requests and
 * write answers, and one thread of its own ({@code threadName}) builds the answers, so a slow page (a store lookup,
 * a scrape of the JVM's metrics) never holds up a decision.
 *
 * <p>Why not the JDK's HTTP server: its dispatcher thread runs the same JDK selector code as the event loops, and
 * the JIT compiles that code for every user at once; each scrape made the event loops' compiled select path give
 * way and compile again ({@code loadtest/README.md}, "The router's known-session tail, thread by thread").
 *
 * <p>GET and HEAD are answered; other methods get 405, a request body over {@value #MAX_REQUEST_BYTES} bytes 413.
 */
final class OpsHttpServer implements AutoCloseable {

    /** The endpoints take no body; this bounds what a client can make the server hold. */
    static final int MAX_REQUEST_BYTES = 16 * 1024;

    /** What a handler reads of a request. */
    record Request(String method, String path, String query, HttpHeaders headers) {
    }

    /** A whole answer. */
    record Answer(int status, Map<String, String> headers, byte[] body) {
        static Answer of(int status, String contentType, String body) {
            return new Answer(status, Map.of("Content-Type", contentType), body.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Builds the answer to a request; runs on the server's own thread and may block briefly. */
    interface Handler {
        Answer handle(Request request) throws Exception;
    }

    private final Channel listener;
    private final ExecutorService worker;

    private OpsHttpServer(Channel listener, ExecutorService worker) {
        this.listener = listener;
        this.worker = worker;
    }

    /** Listens on {@code bindAddress:port} (0 picks a free port) and answers with {@code handler}. */
    static OpsHttpServer start(EventLoopGroup loops, String bindAddress, int port, String threadName,
                               Handler handler) throws IOException {
        ExecutorService worker = Executors.newSingleThreadExecutor(DaemonThreads.named(threadName));
        ServerBootstrap bootstrap = new ServerBootstrap().group(loops).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_REQUEST_BYTES) {
                            @Override
                            protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
                                send(ctx, tooLong(), false, false);
                            }
                        }, new Exchange(handler, worker));
                    }
                });
        InetSocketAddress address = new InetSocketAddress(bindAddress, port);
        var bound = bootstrap.bind(address).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            worker.shutdownNow();
            throw new IOException("cannot listen on " + address + " for " + threadName + ": "
                    + bound.cause().getMessage() + "; choose a free port, or -1 to turn the endpoint off",
                    bound.cause());
        }
        return new OpsHttpServer(bound.channel(), worker);
    }

    int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public void close() {
        listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        worker.shutdownNow();
    }

    /** One connection: hands each whole request to the worker and writes its answer back on the loop. */
    private static final class Exchange extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final Handler handler;
        private final ExecutorService worker;

        Exchange(Handler handler, ExecutorService worker) {
            this.handler = handler;
            this.worker = worker;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest msg) {
            boolean keepAlive = HttpUtil.isKeepAlive(msg) && msg.decoderResult().isSuccess();
            HttpMethod method = msg.method();
            boolean head = method.equals(HttpMethod.HEAD);
            Handler answering;
            if (!msg.decoderResult().isSuccess()) {
                String why = "malformed HTTP request: " + msg.decoderResult().cause().getMessage() + "\n";
                answering = r -> Answer.of(400, "text/plain", why);
            } else if (!method.equals(HttpMethod.GET) && !head) {
                answering = r -> new Answer(405, Map.of("Content-Type", "text/plain", "Allow", "GET, HEAD"),
                        ("only GET and HEAD are answered here, not " + method + "\n").getBytes(StandardCharsets.UTF_8));
            } else {
                answering = handler;
            }
            QueryStringDecoder uri = new QueryStringDecoder(msg.uri());
            String rawQuery = uri.rawQuery();
            Request request = new Request(method.name(), uri.rawPath(), rawQuery.isEmpty() ? null : rawQuery,
                    msg.headers().copy());
            // Every answer, refusals included, is built in turn on the one worker, so a client that sends
            // several requests on one connection gets the answers in the order it asked.
            try {
                worker.execute(() -> {
                    Answer answer;
                    try {
                        answer = answering.handle(request);
                    } catch (Exception | LinkageError e) {
                        answer = Answer.of(500, "text/plain", "the page failed: " + e + "\n");
                    }
                    send(ctx, answer, keepAlive, head);
                });
            } catch (RejectedExecutionException e) {
                send(ctx, Answer.of(503, "text/plain", "the router is stopping\n"), false, false);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof TooLongFrameException && ctx.channel().isActive()) {
                send(ctx, tooLong(), false, false);
            } else {
                ctx.close();
            }
        }
    }

    private static Answer tooLong() {
        return Answer.of(413, "text/plain", "the request is longer than " + MAX_REQUEST_BYTES
                + " bytes; these endpoints take no body\n");
    }

    private static void send(ChannelHandlerContext ctx, Answer answer, boolean keepAlive, boolean head) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(answer.status()),
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(answer.body()));
        answer.headers().forEach((k, v) -> response.headers().set(k, v));
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, answer.body().length);
        if (keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(response);
        } else {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
