package io.scrouter.extproc.redis;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One connection to one Redis server, owned by one event loop, for the calls on a new session's request path: the
 * binding's {@code SET NX PX} and the follow-up batch that rides with it ({@link FollowUpWrites}). Commands are
 * written as they come, without waiting for earlier replies, and replies are handed to callers in the order the
 * commands went out (Redis answers one connection's commands in order).
 *
 * <p>Why not Redisson for these two: Redisson keeps a pooled connection for a command until its reply, so two new
 * sessions in flight go out on two sockets, each read, run and answered by Redis on its own, with a timer and a
 * promise per command on the router's side. On one connection the commands that wait in the socket when Redis gets
 * the core are read in one call and answered in one write, and a follow-up batch waiting for its gathering window
 * goes out in the same write as the router's next {@code SET} instead of waking the loop and Redis again
 * ({@code loadtest/README.md}, "The follow-up batch sent with the next SET"). Everything else (the find-or-bind
 * script for a key already there, reads, counts, the feed) stays on Redisson.
 *
 * <p>What it does that a request path needs, each tested in {@code PipelinedConnectionTest} against a real
 * redis-server:
 * <ul>
 *   <li><b>Connects lazily and again after a loss.</b> The first call connects; a closed connection fails every
 *       command still waiting for its reply, and the next call connects again. A failed connect fails the calls
 *       queued behind it, and calls within {@link #CONNECT_RETRY_MILLIS} after it fail at once with the same
 *       reason instead of each trying again.</li>
 *   <li><b>Authenticates and selects the database</b> ({@code redis.password}, {@code redis.database}) ahead of the
 *       first command; TLS for a {@code rediss://} address, with the JVM's trust store and the host name
 *       verified, as Redisson does it.</li>
 *   <li><b>A backstop for a hung Redis.</b> The caller's deadline ({@code redis.timeout}, kept by the event loop)
 *       is what a request waits. Behind it, a command unanswered for {@link RedisClients#backstopMillis} closes the
 *       connection, which fails the rest, so that replies that will never come do not pile up. As for the caller's
 *       deadline, the backstop is checked only after the loop has read its sockets once more: a reply that arrived
 *       while the router was paused (a GC pause) is taken, not mistaken for a hung Redis.</li>
 *   <li><b>Bounded.</b> At most {@link #MAX_WAITING} commands wait for replies; more fail at once.</li>
 *   <li><b>Holds off after a refusal.</b> A connect refused, a TLS handshake or a password refused, or a connection
 *       closed before its first reply makes calls fail at once for {@link #CONNECT_RETRY_MILLIS}, with the reason,
 *       instead of each opening a connection.</li>
 * </ul>
 *
 * <p>Not done: a host name in {@code redis.address} is resolved by the JVM's resolver as a connection opens, on the
 * event loop (the JVM caches answers, 30 s by default); connections open at start and after a loss only.
 *
 * <p>All its state is touched on its event loop only; a call from another thread is handed to the loop.
 */
final class PipelinedConnection {

    /** Commands waiting for a reply at most: about a backstop's worth of new sessions at 50,000 a second. */
    static final int MAX_WAITING = 10_000;

    /** The connection's name in Redis's {@code CLIENT LIST}. */
    static final String CLIENT_NAME = "scrouter-request-path";

    /** After a failed connect, calls fail at once for this long instead of each trying again. */
    static final long CONNECT_RETRY_MILLIS = 1000;

    /**
     * No reply within the backstop. The simple name says "Timeout", which the router's store guard reads as the
     * store not answering ({@code GuardedStore.isTimeout}), and it is not the router's own deadline, so a request's
     * call that failed by it is made once more.
     */
    static final class ReplyTimeoutException extends IOException {
        ReplyTimeoutException(String message) {
            super(message);
        }
    }

    /** One command waiting for its reply, and when it was written. */
    private record Waiting(CompletableFuture<Object> reply, long sentNanos) {
    }

    private final EventLoop loop;
    private final String host;
    private final int port;
    private final boolean tls;
    private final String password;
    private final int database;
    private final long connectTimeoutMillis;
    private final long backstopNanos;
    private final String name;
    /** Scripts loaded at each connect, and their SHA-1 hashes, by which {@link #script} calls them. */
    private final Map<String, String> scripts = new LinkedHashMap<>();

    /** The open (or opening) connection, or null. */
    private Channel channel;
    /** True once {@link #channel} is connected and its set-up commands written; before that, writes wait here. */
    private boolean ready;
    private final List<ByteBuf> beforeReady = new ArrayList<>();
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private boolean backstopScheduled;
    /** Why the last connect failed, and when; null once one succeeds. */
    private IOException connectFailure;
    private long connectFailedNanos;
    /** Why the connection went, for the commands it fails. */
    private IOException closeReason;
    /** True once the current connection has sent a reply. */
    private boolean answered;
    /** Made at the first TLS connect, with the JVM's trust store as it is then. */
    private SslContext sslContext;

    /**
     * @param address {@code redis://host:port} or {@code rediss://host:port} (TLS)
     * @param scripts scripts to load ({@code SCRIPT LOAD}) at each connect, before any command
     */
    PipelinedConnection(EventLoop loop, String address, String password, int database, long timeoutMillis,
                        List<String> scripts) {
        URI uri = URI.create(address);
        scripts.forEach(text -> this.scripts.put(text, sha1(text)));
        this.loop = loop;
        this.host = uri.getHost();
        this.port = uri.getPort() < 0 ? 6379 : uri.getPort();
        this.tls = "rediss".equalsIgnoreCase(uri.getScheme());
        this.password = password;
        this.database = database;
        this.connectTimeoutMillis = RedisClients.connectTimeoutMillis((int) timeoutMillis);
        this.backstopNanos = TimeUnit.MILLISECONDS.toNanos(RedisClients.backstopMillis((int) timeoutMillis));
        this.name = (tls ? "rediss://" : "redis://") + host + ":" + port;
    }

    /** The TLS set-up for a {@code rediss://} address, made once; null for plain TCP. */
    private SslContext tls() throws SSLException {
        if (tls && sslContext == null) {
            sslContext = SslContextBuilder.forClient().build();
        }
        return sslContext;
    }

    /** True on the event loop that owns this connection. */
    boolean inLoop() {
        return loop.inEventLoop();
    }

    /**
     * Sends one command and flushes the socket, with anything {@link #write} queued before it. The reply is a String
     * (simple or bulk), a Long, a List, or null (nil); an error reply fails the future with {@link Resp2.ErrorReply}.
     */
    CompletableFuture<Object> call(String... words) {
        CompletableFuture<Object> reply = new CompletableFuture<>();
        if (loop.inEventLoop()) {
            send(reply, words, true);
        } else {
            try {
                loop.execute(() -> send(reply, words, true));
            } catch (RejectedExecutionException stopping) {
                reply.completeExceptionally(new IOException("the router is stopping: its connection to Redis at "
                        + name + " is closed", stopping));
            }
        }
        return reply;
    }

    /**
     * On the owning loop only: queues a command without flushing the socket; the next {@link #call} sends it, in the
     * same write.
     */
    CompletableFuture<Object> write(String... words) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("write() is for the connection's own event loop; use call()");
        }
        CompletableFuture<Object> reply = new CompletableFuture<>();
        send(reply, words, false);
        return reply;
    }

    /**
     * Calls a script given at construction by its hash ({@code EVALSHA}); {@code flush} false writes it without a
     * flush, as {@link #write} does. A Redis that no longer holds it ({@code SCRIPT FLUSH} since this connection
     * loaded it) answers {@code NOSCRIPT}, and the call is made again with the script's text.
     */
    CompletableFuture<Object> script(String script, List<?> keys, List<?> args, boolean flush) {
        String[] words = new String[3 + keys.size() + args.size()];
        words[0] = "EVALSHA";
        words[1] = scripts.get(script);
        words[2] = Integer.toString(keys.size());
        int i = 3;
        for (Object k : keys) {
            words[i++] = k.toString();
        }
        for (Object a : args) {
            words[i++] = a.toString();
        }
        CompletableFuture<Object> sent = flush || !loop.inEventLoop() ? call(words) : write(words);
        return sent.exceptionallyCompose(e -> {
            if (!noScript(e)) {
                return CompletableFuture.failedFuture(e);
            }
            String[] eval = words.clone();
            eval[0] = "EVAL";
            eval[1] = script;
            return call(eval);
        });
    }

    private static boolean noScript(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof Resp2.ErrorReply && String.valueOf(t.getMessage()).startsWith("NOSCRIPT")) {
                return true;
            }
        }
        return false;
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-1, which EVALSHA needs", e);
        }
    }

    private void send(CompletableFuture<Object> reply, String[] words, boolean flush) {
        if (waiting.size() >= MAX_WAITING) {
            reply.completeExceptionally(new IOException(MAX_WAITING + " commands already wait for replies from Redis at "
                    + name + ": it is not keeping up, or hangs"));
            flushIfReady(flush);
            return;
        }
        if (channel == null && (!connect() || channel == null)) {
            // Refused now, or by an attempt that failed in the last CONNECT_RETRY_MILLIS.
            reply.completeExceptionally(connectFailure);
            return;
        }
        waiting.add(new Waiting(reply, System.nanoTime()));
        ByteBuf command = Resp2.encode(channel.alloc(), words);
        if (ready) {
            if (flush) {
                channel.writeAndFlush(command, channel.voidPromise());
            } else {
                channel.write(command, channel.voidPromise());
            }
        } else {
            beforeReady.add(command);
        }
        scheduleBackstop();
    }

    private void flushIfReady(boolean flush) {
        if (flush && ready && channel != null) {
            channel.flush();
        }
    }

    /** Starts connecting; false, with {@link #connectFailure} set, while a recent attempt's failure still holds. */
    private boolean connect() {
        if (connectFailure != null
                && System.nanoTime() - connectFailedNanos < TimeUnit.MILLISECONDS.toNanos(CONNECT_RETRY_MILLIS)) {
            return false;
        }
        SslContext ssl;
        try {
            ssl = tls();
        } catch (SSLException e) {
            connectFailed(new IOException("cannot set up TLS for Redis at " + name + ": " + e.getMessage(), e));
            return false;
        }
        closeReason = null;
        ready = false;
        answered = false;
        ChannelFuture connecting = new Bootstrap().group(loop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeoutMillis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        if (ssl != null) {
                            SSLEngine engine = ssl.newEngine(c.alloc(), host, port);
                            SSLParameters params = engine.getSSLParameters();
                            params.setEndpointIdentificationAlgorithm("HTTPS");
                            engine.setSSLParameters(params);
                            c.pipeline().addLast(new SslHandler(engine));
                        }
                        c.pipeline().addLast(new Resp2.Decoder(), new Replies());
                    }
                })
                .connect(host, port);
        channel = connecting.channel();
        Channel opening = channel;
        connecting.addListener(done -> {
            if (opening != channel) {
                return;
            }
            if (!done.isSuccess()) {
                connectFailed(new IOException("cannot connect to Redis at " + name + ": " + done.cause(), done.cause()));
                return;
            }
            connectFailure = null;
            ready = true;
            // Set-up first: its replies come first, and a refusal closes the connection with a message that says why.
            List<Waiting> setUp = new ArrayList<>(2);
            if (password != null) {
                setUp.add(setUp(new String[]{"AUTH", password}, "redis.password was refused"));
            }
            if (database != 0) {
                setUp.add(setUp(new String[]{"SELECT", Integer.toString(database)}, "redis.database " + database
                        + " was refused"));
            }
            // Named, for an operator's CLIENT LIST; a server or proxy that refuses CLIENT SETNAME is still used.
            setUp.add(setUp(new String[]{"CLIENT", "SETNAME", CLIENT_NAME}, null));
            // The scripts sent by EVALSHA, loaded ahead of them: a restarted Redis holds none.
            for (String script : scripts.keySet()) {
                setUp.add(setUp(new String[]{"SCRIPT", "LOAD", script}, null));
            }
            for (int i = setUp.size() - 1; i >= 0; i--) {
                waiting.addFirst(setUp.get(i));
            }
            beforeReady.forEach(b -> opening.write(b, opening.voidPromise()));
            beforeReady.clear();
            opening.flush();
        });
        return true;
    }

    /**
     * Writes a set-up command, to go ahead of every queued command; a refusal closes the connection, naming the
     * setting ({@code refused} null: a refusal is ignored). Returns its place in the queue of replies, for the caller
     * to put first.
     */
    private Waiting setUp(String[] words, String refused) {
        CompletableFuture<Object> reply = new CompletableFuture<>();
        Channel ch = channel;
        ch.write(Resp2.encode(ch.alloc(), words), ch.voidPromise());
        reply.whenComplete((r, e) -> {
            if (e != null && refused != null && ch == channel) {
                IOException why = new IOException("Redis at " + name + ": " + refused + " (" + e.getMessage() + ")");
                // A configuration Redis refuses: calls fail at once for a while instead of each connecting again.
                closeWith(why);
                holdConnectsAfter(why);
            }
        });
        return new Waiting(reply, System.nanoTime());
    }

    /** Calls fail at once with {@code why} for {@link #CONNECT_RETRY_MILLIS} instead of each connecting again. */
    private void holdConnectsAfter(IOException why) {
        connectFailure = why;
        connectFailedNanos = System.nanoTime();
    }

    private void connectFailed(IOException why) {
        holdConnectsAfter(why);
        Channel failed = channel;
        forget();
        failAll(why);
        if (failed != null) {
            failed.close();
        }
    }

    /**
     * Closes the connection; every command still waiting fails with {@code why}, and the next call reconnects. The
     * connection is forgotten before it is closed: closing a connection still being opened fails its connect at once,
     * and that listener must find it no longer current.
     */
    private void closeWith(IOException why) {
        Channel ch = channel;
        if (ch == null) {
            return;
        }
        closeReason = why;
        lost(ch);
        ch.close();
    }

    /**
     * The connection {@code ch} is gone: fail what waits on it and forget it, if it is still the current one. A
     * connection that never answered (a TLS handshake refused, a Redis hung from the start) holds further connects
     * back as a failed connect does.
     */
    private void lost(Channel ch) {
        if (ch != channel) {
            return;
        }
        IOException why = closeReason != null ? closeReason
                : new IOException("connection to Redis at " + name + " closed with " + waiting.size()
                + " commands unanswered");
        if (!answered) {
            holdConnectsAfter(why);
        }
        forget();
        failAll(why);
    }

    /** No current connection: what the next call needs to open a new one. */
    private void forget() {
        channel = null;
        ready = false;
        beforeReady.forEach(ReferenceCountUtil::safeRelease);
        beforeReady.clear();
    }

    /**
     * Fails every waiting command. The queue is emptied first: a caller's callback may make a new call at once,
     * which opens the next connection and queues there, and must not be taken for one of these.
     */
    private void failAll(IOException why) {
        List<Waiting> failed = new ArrayList<>(waiting);
        waiting.clear();
        for (Waiting w : failed) {
            w.reply().completeExceptionally(why);
        }
    }

    /** While commands wait, checks the oldest against the backstop when it falls due. */
    private void scheduleBackstop() {
        if (backstopScheduled || waiting.isEmpty()) {
            return;
        }
        backstopScheduled = true;
        long due = waiting.peek().sentNanos() + backstopNanos - System.nanoTime();
        loop.schedule(this::backstopDue, Math.max(0, due), TimeUnit.NANOSECONDS);
    }

    /**
     * Due: check on the loop's next round of tasks, which it starts only after reading its sockets (as the caller's
     * deadline does, {@code SystemTime.expireAfterNextRead}), so that a reply read in that round counts.
     */
    private void backstopDue() {
        loop.schedule(this::checkBackstop, 0, TimeUnit.NANOSECONDS);
    }

    private void checkBackstop() {
        backstopScheduled = false;
        Waiting oldest = waiting.peek();
        if (oldest == null) {
            return;
        }
        long waited = System.nanoTime() - oldest.sentNanos();
        if (waited >= backstopNanos) {
            closeWith(new ReplyTimeoutException("Redis at " + name + " did not answer within "
                    + TimeUnit.NANOSECONDS.toMillis(backstopNanos) + " ms (4 x redis.timeout); the connection was "
                    + "closed and the next call opens a new one"));
            return;
        }
        scheduleBackstop();
    }

    /** Closes the connection, failing what waits; the next call would open a new one. */
    void close() {
        if (loop.inEventLoop()) {
            closeWith(new IOException("connection to Redis at " + name + " closed by the router"));
        } else {
            loop.execute(this::close);
        }
    }

    /** Hands each reply to the oldest waiting command. */
    private final class Replies extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object reply) {
            if (ctx.channel() != channel) {
                return;
            }
            answered = true;
            Waiting w = waiting.poll();
            if (w == null) {
                closeWith(new IOException("Redis at " + name + " sent a reply to no command"));
                return;
            }
            if (reply instanceof Resp2.ErrorReply e) {
                w.reply().completeExceptionally(e);
            } else {
                w.reply().complete(Resp2.value(reply));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (ctx.channel() == channel && closeReason == null) {
                closeReason = new IOException("connection to Redis at " + name + " failed: " + cause, cause);
            }
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            lost(ctx.channel());
        }
    }
}
