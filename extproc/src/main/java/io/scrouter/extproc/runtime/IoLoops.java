package io.scrouter.extproc.runtime;

import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The network threads of a router on Netty, one per CPU the JVM sees, shared by the gRPC server and the Redis
 * client. A decision runs on the event loop that read Envoy's message ({@code directExecutor}); when the Redis
 * connection it writes to lives on the same loop, the command is written, its reply read and the answer written
 * back without handing work to another thread. With separate thread pools each new session cost two hand-offs
 * and their wake-ups, which on a router limited to one CPU queue behind each other.
 */
public final class IoLoops implements AutoCloseable {

    private final MultiThreadIoEventLoopGroup group;

    private IoLoops(int threads) {
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("scrouter-io", true),
                NioIoHandler.newFactory());
    }

    /** One event loop per available processor, as the JVM counts them (a CPU limit counts). */
    public static IoLoops perProcessor() {
        return new IoLoops(Math.max(1, Runtime.getRuntime().availableProcessors()));
    }

    public EventLoopGroup group() {
        return group;
    }

    /**
     * A gRPC server on these loops that runs decisions on the loop that read the request: decisions never block
     * (Redis calls are asynchronous).
     */
    public NettyServerBuilder serverBuilder(InetSocketAddress address) {
        return NettyServerBuilder.forAddress(address)
                .bossEventLoopGroup(group).workerEventLoopGroup(group).channelType(NioServerSocketChannel.class)
                .directExecutor()
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true);
    }

    /** Stops the loops once the server and the Redis client using them are closed. */
    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
