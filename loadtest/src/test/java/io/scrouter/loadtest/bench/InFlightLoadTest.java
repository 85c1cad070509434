package io.scrouter.loadtest.bench;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.client.ExtProcClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The benchmark's closed loop against a real gRPC server on loopback that counts what it receives. */
class InFlightLoadTest {

    private static final int IN_FLIGHT = 4;

    private final AtomicLong received = new AtomicLong();
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).directExecutor()
                .addService(new ExternalProcessorGrpc.ExternalProcessorImplBase() {
                    @Override
                    public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> out) {
                        return new StreamObserver<>() {
                            @Override
                            public void onNext(ProcessingRequest request) {
                                received.incrementAndGet();
                                out.onNext(NoopProcessor.ROUTE);
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        };
                    }
                }).build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** The load against the counting server, with an answer deadline far beyond any round here. */
    private InFlightLoad load() {
        return new InFlightLoad(List.of(new ExtProcClient(channel, Duration.ofSeconds(30))));
    }

    @Test
    void requestsSentDuringTheLeadInAreSentButNotMeasured() throws Exception {
        long[] receivedWhenMeasuringStarted = {-1};

        InFlightLoad.Figures f = load().run(() -> UUID.randomUUID().toString(), IN_FLIGHT, 2000,
                () -> receivedWhenMeasuringStarted[0] = received.get(), 300);

        long measuredOnTheServer = received.get() - receivedWhenMeasuringStarted[0];
        assertThat(receivedWhenMeasuringStarted[0]).as("the lead-in kept the server busy").isGreaterThan(IN_FLIGHT);
        assertThat(f.errors()).isZero();
        // Every measured answer was sent once measuring had started, so the server received it after that point;
        // the requests already in flight then were received after it but are not measured.
        assertThat(f.answered()).isBetween(measuredOnTheServer - IN_FLIGHT, measuredOnTheServer);
        assertThat(f.perServer()[0]).isEqualTo(f.answered());
        assertThat(f.seconds()).as("the measured part, not the lead-in").isGreaterThanOrEqualTo(0.3).isLessThan(2.0);
    }

    @Test
    void withoutALeadInEveryRequestIsMeasuredAndTheBeforeReadingsComeFirst() throws Exception {
        long[] receivedWhenMeasuringStarted = {-1};

        InFlightLoad.Figures f = load().run(() -> UUID.randomUUID().toString(), IN_FLIGHT, 0,
                () -> receivedWhenMeasuringStarted[0] = received.get(), 300);

        assertThat(receivedWhenMeasuringStarted[0]).isZero();
        assertThat(f.answered()).isEqualTo(received.get()).isGreaterThan(IN_FLIGHT);
    }
}
