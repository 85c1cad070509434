package io.scrouter.testkit.envoy;

import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.scrouter.testkit.grpc.RawBytes;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Envoy 1.34 where no Envoy binary exists: a plaintext HTTP/2 gRPC listener on loopback that carries each
 * Spark Connect call the way the shipped bootstrap makes Envoy carry it, to the routers' ext_proc endpoints
 * and on to the replica they name. Until a real Envoy runs in CI, this is what our trust in the data path
 * rests on, so each behaviour follows a named part of Envoy's source; the table in {@code envoy/README.md}
 * lists them with the tests that fail when one is removed. Test code only; never part of the service.
 *
 * <p>Built from a real bootstrap ({@link #start(Path, List)}), it takes the route header or metadata key, the
 * early header removal, ext_proc's timeout, failure mode, processing and override modes, the HTTP/2 stream
 * window and the ext_proc cluster's health check from it ({@link EnvoyModel}). The downstream listener's
 * HTTP/2 flow-control window is that stream window, as in Envoy's codec. Every request is recorded.
 */
public final class EnvoyStandIn implements AutoCloseable {

    private final EnvoyModel model;
    private final ExtProcCluster extProc;
    private final Server listener;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "envoy-stand-in");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(1, r -> {
        Thread t = new Thread(r, "envoy-stand-in-timer");
        t.setDaemon(true);
        return t;
    });
    private final ConcurrentMap<InetSocketAddress, ManagedChannel> upstreams = new ConcurrentHashMap<>();
    private final List<RecordedCall> calls = new CopyOnWriteArrayList<>();
    private final AtomicLong rejectedMutations = new AtomicLong();

    private EnvoyStandIn(EnvoyModel model, List<InetSocketAddress> extProcEndpoints) throws IOException {
        this.model = model;
        this.extProc = new ExtProcCluster(extProcEndpoints, model.healthCheck(), timers);
        this.listener = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .executor(pool)
                // Envoy's codec gives each downstream stream this receive window; the client may not send more
                // before Envoy has taken it in.
                .flowControlWindow(model.streamWindowBytes())
                .maxInboundMessageSize(Integer.MAX_VALUE)
                .fallbackHandlerRegistry(new HandlerRegistry() {
                    @Override
                    public ServerMethodDefinition<?, ?> lookupMethod(String fullMethodName, String authority) {
                        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                                .setFullMethodName(fullMethodName)
                                .setType(MethodDescriptor.MethodType.UNKNOWN)
                                .setRequestMarshaller(RawBytes.INSTANCE)
                                .setResponseMarshaller(RawBytes.INSTANCE)
                                .build();
                        ServerCallHandler<byte[], byte[]> handler = (call, headers) ->
                                new HttpStream(EnvoyStandIn.this, call, headers).start();
                        return ServerMethodDefinition.create(method, handler);
                    }
                })
                .build()
                .start();
    }

    /** Starts a stand-in for {@code model}, sending ext_proc streams to {@code extProcEndpoints}. */
    public static EnvoyStandIn start(EnvoyModel model, List<InetSocketAddress> extProcEndpoints) throws IOException {
        return new EnvoyStandIn(model, extProcEndpoints);
    }

    /** Starts a stand-in for a bootstrap file such as {@code envoy/envoy.yaml}. */
    public static EnvoyStandIn start(Path bootstrap, List<InetSocketAddress> extProcEndpoints) throws IOException {
        return start(EnvoyModel.of(EnvoyConfigs.bootstrap(Files.readString(bootstrap))), extProcEndpoints);
    }

    /** The listener's port: point Spark clients at {@code sc://127.0.0.1:<port>/}. */
    public int port() {
        return listener.getPort();
    }

    public EnvoyModel model() {
        return model;
    }

    /**
     * Waits, bounded, until {@code n} ext_proc endpoints pass their health checks, as Envoy's cluster warms
     * before the listener takes traffic. The bound should come from the health check's own settings.
     */
    public boolean awaitHealthyExtProc(int n, Duration within) throws InterruptedException {
        return extProc.awaitHealthy(n, within);
    }

    /** How many ext_proc endpoints pass their health checks now. */
    public long healthyExtProcEndpoints() {
        return extProc.hosts().stream().filter(ExtProcCluster.Host::healthy).count();
    }

    /** Every request handled so far, in the order their outcome was known. */
    public List<RecordedCall> calls() {
        return List.copyOf(calls);
    }

    /** The calls of one session, whether it sent the header or only had its id in the body. */
    public List<RecordedCall> callsOf(String session) {
        return calls.stream().filter(c -> session.equals(c.session())).toList();
    }

    /** Header mutations dropped by the mutation rules ({@code rejected_header_mutations}). */
    public long rejectedHeaderMutations() {
        return rejectedMutations.get();
    }

    ExtProcCluster extProc() {
        return extProc;
    }

    ExecutorService pool() {
        return pool;
    }

    ScheduledExecutorService timers() {
        return timers;
    }

    void record(RecordedCall call) {
        calls.add(call);
    }

    void noteRejectedMutation() {
        rejectedMutations.incrementAndGet();
    }

    /** One connection pool per upstream address, as the ORIGINAL_DST cluster creates hosts on demand. */
    ManagedChannel upstreamChannel(InetSocketAddress address) {
        return upstreams.computeIfAbsent(address, a -> NettyChannelBuilder.forAddress(a).usePlaintext()
                .maxInboundMessageSize(Integer.MAX_VALUE).build());
    }

    @Override
    public void close() throws InterruptedException {
        listener.shutdownNow();
        timers.shutdownNow();
        extProc.close();
        upstreams.values().forEach(ManagedChannel::shutdownNow);
        pool.shutdownNow();
        listener.awaitTermination(5, TimeUnit.SECONDS);
    }
}
