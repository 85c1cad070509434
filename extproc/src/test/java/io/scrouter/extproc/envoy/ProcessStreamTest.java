package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.envoy.StreamLimits;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.pool.ServerPool;
import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.RouterSettings;
import io.scrouter.extproc.routing.SessionRouter;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.session.Binding;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.Lookup;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.Routings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** The stream handling around a decision: every path answers Envoy, and answers it once. */
class ProcessStreamTest {

    private Server server;
    private ManagedChannel channel;
    private final List<Decision> observed = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            server.shutdownNow();
        }
    }

    /** A store whose calls never complete: a Redis that accepted the command and then hung. */
    private static final class HangingStore implements SessionStore {
        @Override
        public CompletableFuture<Optional<Binding>> find(String sessionId) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Binding> bindIfAbsent(String sessionId, String replicaId) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Lookup> findOrBind(String sessionId, String replicaIfNew) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Binding> claim(String sessionId, String replicaId) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Boolean> touch(String sessionId, String replicaId) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Void> release(String sessionId, String replicaId) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Map<String, Long>> countSessions(Collection<String> replicaIds) {
            return new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<Long> evictReplica(String replicaId) {
            return new CompletableFuture<>();
        }
    }

    private ExtProcClient serve(SessionStore store, long storeTimeoutMillis, long deadlineMillis) throws Exception {
        ServerPool pool = new ServerPool();
        pool.replace(List.of(new Replica("a", "127.0.0.1:15002", null, ReplicaState.READY)));
        SessionRouter router = Routings.over(pool, store, RouterSettings.defaults()
                .withStoreTimeoutMillis(storeTimeoutMillis).withSettleMillis(0), SystemTime.shared()).router();
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new ExtProcService(router::decide, (d, nanos, forged) -> observed.add(d),
                        new StreamLimits(deadlineMillis, 1 << 20), SystemTime.shared()))
                .build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        return new ExtProcClient(channel, Patience.ANSWER);
    }

    private static InMemorySessionStore memoryStore() {
        return new InMemorySessionStore(new SessionTtls(Duration.ofMinutes(1), Duration.ofMinutes(1), Duration.ofMinutes(1)), System::currentTimeMillis);
    }

    @Test
    void decisionPastItsDeadlineIsAnsweredUnavailableNotLeftHanging() throws Exception {
        // The store call's own timeout is longer than the decision deadline: the deadline must fire first.
        ExtProcClient envoy = serve(new HangingStore(), 60_000, 100);
        ProcessingResponse r = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
        assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.UNAVAILABLE.value());
        assertThat(ExtProcClient.rejectionMessage(r)).contains("could not decide within 100 ms", "retry");
        Await.until("the decision observed", Patience.ANSWER, () -> !observed.isEmpty());
        assertThat(observed).singleElement().isInstanceOf(Decision.Reject.class);
    }

    @Test
    void hungStoreIsFirstABlipToRetryThenADownStoreWithRendezvousFallback() throws Exception {
        ExtProcClient envoy = serve(new HangingStore(), 30, 1000);
        int failuresToOpen = RouterSettings.defaults().breakerFailures();
        // First: the store may only be slow, and guessing could move an existing session: ask for a retry.
        for (int i = 1; i < failuresToOpen; i++) {
            ProcessingResponse blip = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
            assertThat(ExtProcClient.rejectionCode(blip)).isEqualTo(Status.Code.UNAVAILABLE.value());
            assertThat(ExtProcClient.rejectionMessage(blip)).contains("session store did not answer", "retry");
        }
        // Repeated failures open the breaker: the store is down, and new sessions are placed without it.
        ProcessingResponse later = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
        assertThat(ExtProcClient.upstreamOf(later)).isEqualTo("127.0.0.1:15002");
        // The observer runs after the answer is on its way, on the thread that completed the decision.
        Await.until("every decision observed", Patience.ANSWER, () -> observed.size() >= failuresToOpen);
        assertThat(observed).hasSize(failuresToOpen);
        assertThat(observed.get(failuresToOpen - 1)).isInstanceOfSatisfying(Decision.Route.class,
                route -> assertThat(route.outcome()).isEqualTo(Decision.Outcome.FALLBACK));
    }

    @Test
    void phasesNeverRequestedArePassedThroughSoEnvoyIsNotStalled() throws Exception {
        ExtProcClient envoy = serve(memoryStore(), 50, 150);
        ProcessingRequest responseHeaders = ProcessingRequest.newBuilder()
                .setResponseHeaders(HttpHeaders.getDefaultInstance()).build();
        ProcessingRequest requestTrailers = ProcessingRequest.newBuilder()
                .setRequestTrailers(HttpTrailers.getDefaultInstance()).build();
        List<ProcessingResponse> answers = envoy.exchange(List.of(responseHeaders, requestTrailers));
        assertThat(answers).hasSize(2);
        assertThat(answers.get(0).hasResponseHeaders()).isTrue();
        assertThat(answers.get(0).getResponseHeaders().getResponse().getHeaderMutation().getSetHeadersCount()).isZero();
        assertThat(answers.get(1).hasRequestTrailers()).isTrue();
        assertThat(observed).isEmpty();
    }

    @Test
    void secondRequestOfASessionIsAnsweredFromTheNearCache() throws Exception {
        ExtProcClient envoy = serve(memoryStore(), 50, 150);
        String session = UUID.randomUUID().toString();
        envoy.send(ExtProcClient.sparkCall("Config", session));
        envoy.send(ExtProcClient.sparkCall("Config", session));
        Await.until("both decisions observed", Patience.ANSWER, () -> observed.size() >= 2);
        assertThat(observed).hasSize(2);
        // No metrics URL on the replica: placement is on session counts, and says so.
        assertThat(((Decision.Route) observed.get(0)).outcome()).isEqualTo(Decision.Outcome.PLACED_DEGRADED);
        assertThat(((Decision.Route) observed.get(1)).outcome()).isEqualTo(Decision.Outcome.KNOWN);
    }
}
