package io.scrouter.extproc.runtime;

import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The network threads of a router on Netty, one per CPU the JVM sees, shared by the gRPC server and the Redis
 * client. A decision runs on the event loop that read Envoy's message ({@code directExecutor}); when the Redis
 * connection it writes to lives on the same loop, the command is written, its reply read and the answer written
 * back without handing work to another thread. With separate thread pools each new session cost two hand-offs
 * and their wake-ups, which on a router limited to one CPU queue behind each other.
 *
 * <p>Netty's buffer leak detector is off in a process that makes these loops, unless the operator set its level
 * ({@link #leakDetectionOffUnlessAsked}).
 */
public final class IoLoops implements AutoCloseable {

    /** Netty's own switches for the leak detector's level, the current one and the one it still reads. */
    static final String LEAK_DETECTION_LEVEL = "io.netty.leakDetection.level";
    static final String LEAK_DETECTION_LEVEL_OLD = "io.netty.leakDetectionLevel";

    private final MultiThreadIoEventLoopGroup group;

    private IoLoops(int threads) {
        this.group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("scrouter-io", true),
                NioIoHandler.newFactory());
    }

    /** One event loop per available processor, as the JVM counts them (a CPU limit counts). */
    public static IoLoops perProcessor() {
        leakDetectionOffUnlessAsked();
        return new IoLoops(Math.max(1, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * Turns Netty's buffer leak detector off unless {@value #LEAK_DETECTION_LEVEL} (or the older
     * {@value #LEAK_DETECTION_LEVEL_OLD}) is set; returns whether it did.
     *
     * <p>At its default level ({@code SIMPLE}) the detector wraps one buffer allocation in 128 and records where the
     * buffer was created and released, each record a {@link Throwable} with its stack trace filled in
     * ({@code ResourceLeakDetector.track0} and {@code TraceRecord} in Netty 4.2). The request path allocates a few
     * buffers per request (the HTTP/2 frames read and written, the gRPC message), so about one request in seven paid
     * for a stack walk of some 40 frames: measured on one core, about 1 µs of CPU per answer on average, 12% of the
     * whole. The router handles no buffers of its own (gRPC and the Redis client do), so the detector only ever
     * watches those libraries; anyone chasing a leak in them sets the level, and this leaves it alone.
     * {@code ResourceLeakDetector.setLevel} applies to detectors made before it too (the level is read on every
     * allocation), so it does not matter which library touched Netty first.
     */
    static boolean leakDetectionOffUnlessAsked() {
        if (System.getProperty(LEAK_DETECTION_LEVEL) != null || System.getProperty(LEAK_DETECTION_LEVEL_OLD) != null) {
            return false;
        }
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        return true;
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
