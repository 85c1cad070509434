package io.scrouter.extproc.runtime;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.resolver.NoopAddressResolverGroup;
import io.scrouter.scorer.probe.HttpGetter;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * HTTP GETs for the load probes on the router's own event loops ({@link IoLoops}), one connection per GET.
 *
 * <p>Why not the JDK's client: its selector thread runs the same JDK selector code as the event loops, and the JIT
 * compiles that code for every user at once. A second user with other types makes the compiled select path of the
 * event loops give way (a {@code class_check} trap) and compile again while requests wait ({@code loadtest/README.md},
 * "The router's known-session tail, thread by thread"). On the event loops the probes add sockets to the loops'
 * selectors and no thread of their own.
 *
 * <p>Nothing that can block runs on a loop: the host name is looked up on {@code completions} (the JDK's resolver
 * blocks), the connection is made to the address found, and the answer is handed to {@code completions}, where the
 * probe parses it. A GET that has not been answered {@code timeout} after it started is closed.
 */
public final class LoopHttpGetter implements HttpGetter {

    /** Larger than any executor list a driver sends (about 3 KB per executor); a longer answer fails the probe. */
    static final int MAX_BODY_BYTES = 64 << 20;

    private final EventLoopGroup loops;
    private final Executor completions;
    private final int maxBodyBytes;
    private volatile SslContext tls;

    /**
     * @param loops       the router's event loops
     * @param completions where host names are looked up and answers are handed over (never a loop)
     */
    public LoopHttpGetter(EventLoopGroup loops, Executor completions) {
        this(loops, completions, MAX_BODY_BYTES);
    }

    LoopHttpGetter(EventLoopGroup loops, Executor completions, int maxBodyBytes) {
        this.loops = loops;
        this.completions = completions;
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public CompletableFuture<Reply> get(URI uri, Duration timeout) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
            return CompletableFuture.failedFuture(new IOException("cannot GET " + uri
                    + ": a replica's metricsUrl must be http://host:port or https://host:port"));
        }
        boolean secure = scheme.equals("https");
        int port = uri.getPort() >= 0 ? uri.getPort() : secure ? 443 : 80;
        CompletableFuture<Reply> reply = new CompletableFuture<>();
        completions.execute(() -> {
            try {
                InetSocketAddress address = new InetSocketAddress(InetAddress.getByName(uri.getHost()), port);
                connect(uri, address, secure, timeout, reply);
            } catch (IOException | RuntimeException e) {
                reply.completeExceptionally(e instanceof IOException ? e
                        : new IOException("GET " + uri + " failed: " + e, e));
            }
        });
        // Callers go on from here on the completions executor, never on a loop.
        return reply.whenCompleteAsync((r, e) -> { }, completions);
    }

    private void connect(URI uri, InetSocketAddress address, boolean secure, Duration timeout,
                         CompletableFuture<Reply> reply) throws SSLException {
        SslContext context = secure ? tls() : null;
        Bootstrap bootstrap = new Bootstrap().group(loops).channel(NioSocketChannel.class)
                .resolver(NoopAddressResolverGroup.INSTANCE)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, timeout.toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (context != null) {
                            SslHandler ssl = context.newHandler(ch.alloc(), uri.getHost(), address.getPort());
                            SSLParameters params = ssl.engine().getSSLParameters();
                            params.setEndpointIdentificationAlgorithm("HTTPS");
                            ssl.engine().setSSLParameters(params);
                            ch.pipeline().addLast(ssl);
                        }
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(maxBodyBytes),
                                new AnswerHandler(uri, reply));
                    }
                });
        ChannelFuture connecting = bootstrap.connect(address);
        Channel channel = connecting.channel();
        reply.whenComplete((r, e) -> channel.close());
        connecting.addListener(f -> {
            if (!f.isSuccess()) {
                Throwable why = f.cause().getCause() != null ? f.cause().getCause() : f.cause();
                reply.completeExceptionally(new IOException("GET " + uri + ": cannot connect to "
                        + address.getAddress().getHostAddress() + ":" + address.getPort() + ": " + why.getMessage(),
                        f.cause()));
                return;
            }
            ScheduledFuture<?> deadline = channel.eventLoop().schedule(() -> reply.completeExceptionally(
                    new IOException("GET " + uri + " was not answered within " + timeout.toMillis() + " ms")),
                    timeout.toMillis(), TimeUnit.MILLISECONDS);
            reply.whenComplete((r, e) -> deadline.cancel(false));
            DefaultFullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET,
                    pathAndQuery(uri), Unpooled.EMPTY_BUFFER);
            request.headers().set(HttpHeaderNames.HOST, hostHeader(uri))
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
                    .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON);
            channel.writeAndFlush(request).addListener(w -> {
                if (!w.isSuccess()) {
                    reply.completeExceptionally(new IOException("GET " + uri + ": sending failed: "
                            + w.cause().getMessage(), w.cause()));
                }
            });
        });
    }

    private SslContext tls() throws SSLException {
        SslContext context = tls;
        if (context == null) {
            context = SslContextBuilder.forClient().sslProvider(SslProvider.JDK).build();
            tls = context;
        }
        return context;
    }

    static String pathAndQuery(URI uri) {
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        return uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
    }

    private static String hostHeader(URI uri) {
        String host = uri.getHost();
        return uri.getPort() >= 0 ? host + ":" + uri.getPort() : host;
    }

    /** Completes the reply with the aggregated answer, or with why there is none. */
    private final class AnswerHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
        private final URI uri;
        private final CompletableFuture<Reply> reply;

        AnswerHandler(URI uri, CompletableFuture<Reply> reply) {
            this.uri = uri;
            this.reply = reply;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
            if (!response.decoderResult().isSuccess()) {
                reply.completeExceptionally(new IOException("GET " + uri + ": malformed HTTP answer: "
                        + response.decoderResult().cause().getMessage()));
                return;
            }
            reply.complete(new Reply(response.status().code(), ByteBufUtil.getBytes(response.content())));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof TooLongFrameException) {
                reply.completeExceptionally(new IOException("GET " + uri + ": the answer is longer than "
                        + maxBodyBytes + " bytes, more than any driver's REST API sends", cause));
            } else {
                reply.completeExceptionally(new IOException("GET " + uri + " failed: " + cause, cause));
            }
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            reply.completeExceptionally(new IOException("GET " + uri
                    + ": the connection closed before a whole answer came"));
        }
    }
}
