package io.scrouter.extproc.envoy;

import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
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
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.testing.Await;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.extproc.testing.Routings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Body mode over real Envoy protos and in-process gRPC: a Spark Connect request without the session header
 * gets a mode override asking for the body, and its route rides on the body answer.
 */
class BodyModeStreamTest {

    private Server server;
    private ManagedChannel channel;
    private ExtProcClient envoy;
    private final List<Decision> observed = new CopyOnWriteArrayList<>();

    @BeforeEach
    void serve() throws Exception {
        ServerPool pool = new ServerPool();
        pool.replace(List.of(new Replica("a", "127.0.0.1:15002", null, ReplicaState.READY),
                new Replica("b", "127.0.0.1:15003", null, ReplicaState.READY)));
        InMemorySessionStore store = new InMemorySessionStore(new SessionTtls(Duration.ofMinutes(1), Duration.ofMinutes(1), Duration.ofMinutes(1)),
                System::currentTimeMillis);
        SessionRouter router = Routings.over(pool, store, RouterSettings.defaults().withSettleMillis(0),
                SystemTime.shared()).router();
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new ExtProcService(router::decide, (d, nanos, forged) -> observed.add(d),
                        new StreamLimits(150, 1 << 20), SystemTime.shared()))
                .build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
        envoy = new ExtProcClient(channel, Patience.ANSWER);
    }

    @AfterEach
    void stop() {
        channel.shutdownNow();
        server.shutdownNow();
    }

    private static ProcessingRequest headersWithoutSession(String method) {
        return ExtProcClient.headersRequest(ExtProcClient.sparkCall(method, null));
    }

    private static String upstreamOnBody(ProcessingResponse r) {
        assertThat(r.hasRequestBody()).as("a body answer: %s", r).isTrue();
        var sets = r.getRequestBody().getResponse().getHeaderMutation().getSetHeadersList();
        assertThat(sets).singleElement().satisfies(opt -> {
            assertThat(opt.getHeader().getKey()).isEqualTo(RouteHeaders.UPSTREAM);
            assertThat(opt.getHeader().getValue()).as("raw_value only").isEmpty();
            assertThat(opt.getAppendAction().name()).isEqualTo("OVERWRITE_IF_EXISTS_OR_ADD");
        });
        String address = sets.get(0).getHeader().getRawValue().toString(StandardCharsets.US_ASCII);
        assertThat(r.getDynamicMetadata().getFieldsOrThrow(RouteHeaders.METADATA_NAMESPACE).getStructValue()
                .getFieldsOrThrow(RouteHeaders.METADATA_UPSTREAM_KEY).getStringValue()).isEqualTo(address);
        return address;
    }

    private static void assertAsksForBody(ProcessingResponse r) {
        assertThat(r.hasRequestHeaders()).isTrue();
        assertThat(r.getRequestHeaders().getResponse().hasHeaderMutation()).as("no route yet").isFalse();
        assertThat(r.getModeOverride()).isEqualTo(Responses.BODY_MODE);
    }

    @Test
    void requestWithoutHeaderIsRoutedFromItsBodyAndKeepsItsReplicaInBothModes() throws Exception {
        String session = UUID.randomUUID().toString();
        List<ProcessingResponse> answers = envoy.exchange(List.of(headersWithoutSession("ExecutePlan"),
                SparkRequestBodies.body(SparkRequestBodies.framed(session, 200), true)));
        assertAsksForBody(answers.get(0));
        String replica = upstreamOnBody(answers.get(1));

        // Later RPCs of the session, with or without the header, go to the same replica.
        for (String method : List.of("AnalyzePlan", "Config", "ReleaseExecute", "ReattachExecute")) {
            List<ProcessingResponse> again = envoy.exchange(List.of(headersWithoutSession(method),
                    SparkRequestBodies.body(SparkRequestBodies.framed(session, 30), true)));
            assertThat(upstreamOnBody(again.get(1))).as(method).isEqualTo(replica);
        }
        assertThat(ExtProcClient.upstreamOf(envoy.send(ExtProcClient.sparkCall("Config", session))))
                .isEqualTo(replica);
        // The observer runs after the answer is on its way.
        Await.until("every decision observed", Patience.ANSWER, () -> observed.size() >= 6);
        assertThat(observed).hasSize(6).allSatisfy(d -> assertThat(d).isInstanceOf(Decision.Route.class));
    }

    @Test
    void requestWithTheHeaderNeverAsksForTheBody() throws Exception {
        ProcessingResponse r = envoy.send(ExtProcClient.sparkCall("ExecutePlan", UUID.randomUUID().toString()));
        assertThat(r.hasModeOverride()).isFalse();
        assertThat(ExtProcClient.upstreamOf(r)).isNotNull();
    }

    @Test
    void bodyInManySmallPiecesIsAnsweredOncePerPieceUntilTheRouteThenTheStreamEnds() throws Exception {
        Random random = new Random(7);
        for (int trial = 0; trial < 100; trial++) {
            String session = UUID.randomUUID().toString();
            byte[] body = SparkRequestBodies.framed(session, random.nextInt(100));
            TreeSet<Integer> cuts = new TreeSet<>();
            int pieces = 1 + random.nextInt(8);
            for (int i = 0; i < pieces; i++) {
                cuts.add(1 + random.nextInt(body.length - 1));
            }
            List<ProcessingRequest> messages = new ArrayList<>();
            messages.add(headersWithoutSession("AnalyzePlan"));
            messages.addAll(SparkRequestBodies.split(body, cuts.stream().mapToInt(Integer::intValue).toArray()));
            // The piece holding the id's last byte (frame header 5, tag and length 2, UUID 36) completes it.
            int idEnd = 5 + 2 + 36;
            int completing = 1 + (int) cuts.stream().filter(c -> c < idEnd).count();

            List<ProcessingResponse> answers = envoy.exchange(messages);

            assertThat(answers).as("trial %d: every piece up to the id answered, nothing after the route",
                    trial).hasSize(1 + completing);
            assertAsksForBody(answers.get(0));
            assertThat(upstreamOnBody(answers.get(1))).as("trial %d", trial).startsWith("127.0.0.1:");
            for (ProcessingResponse later : answers.subList(2, answers.size())) {
                assertThat(later.hasRequestBody()).isTrue();
                assertThat(later.getRequestBody().getResponse().hasHeaderMutation()).isFalse();
                assertThat(later.getRequestBody().getResponse().hasBodyMutation()).as("body unchanged").isFalse();
            }
        }
    }

    @Test
    void largeUploadGetsItsRouteOnTheFirstBufferAndTheStreamEndsSoTheRestFlowsPastTheRouter() throws Exception {
        // An AddArtifacts upload: BUFFERED_PARTIAL sends the first buffer; the route answers it and the stream
        // closes with OK, so Envoy streams the remaining chunks on without the processor.
        String session = UUID.randomUUID().toString();
        byte[] firstMessage = SparkRequestBodies.framed(session, 1 << 20);
        List<ProcessingRequest> messages = new ArrayList<>(List.of(headersWithoutSession("AddArtifacts"),
                SparkRequestBodies.body(firstMessage, false)));
        for (int i = 0; i < 5; i++) {
            messages.add(SparkRequestBodies.body(SparkRequestBodies.framed(session, 256 << 10), i == 4));
        }
        List<ProcessingResponse> answers = envoy.exchange(messages);
        assertThat(answers).hasSize(2);
        upstreamOnBody(answers.get(1));
    }

    @Test
    void bodyLargerThanTheBoundIsRefusedWithAClearErrorNotAReset() throws Exception {
        byte[] tooLarge = SparkRequestBodies.framed(UUID.randomUUID().toString(), (1 << 20) + (64 << 10) + 1);

        List<ProcessingResponse> answers = envoy.exchange(List.of(headersWithoutSession("AddArtifacts"),
                SparkRequestBodies.body(tooLarge, false)));

        assertThat(answers).hasSize(2);
        assertThat(ExtProcClient.rejectionCode(answers.get(1))).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
        assertThat(ExtProcClient.rejectionMessage(answers.get(1))).contains("x-spark-session-id")
                .contains("initial_stream_window_size");
    }

    private ProcessingResponse rejectionFor(byte[] body) throws Exception {
        List<ProcessingResponse> answers = envoy.exchange(List.of(headersWithoutSession("ExecutePlan"),
                SparkRequestBodies.body(body, true)));
        assertAsksForBody(answers.get(0));
        return answers.get(1);
    }

    @Test
    void compressedFirstMessageIsRejectedTellingTheUserToAddTheHeader() throws Exception {
        byte[] body = SparkRequestBodies.framed(UUID.randomUUID().toString(), 20);
        body[0] = 1;
        ProcessingResponse r = rejectionFor(body);
        assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(r)).contains("compressed", "x-spark-session-id=<uuid>");
        assertThat(r.getImmediateResponse().getDetails()).isEqualTo("scrouter_compressed_body");
    }

    @Test
    void bodyWithoutUsableSessionIdIsRejectedClearly() throws Exception {
        ProcessingResponse noField = rejectionFor(SparkRequestBodies.frame(0, new byte[] {0x12, 1, 'x'}));
        assertThat(ExtProcClient.rejectionCode(noField)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(noField)).contains("does not start with session_id");

        ProcessingResponse notUuid = rejectionFor(SparkRequestBodies.framed("not-a-uuid", 3));
        assertThat(ExtProcClient.rejectionCode(notUuid)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(notUuid)).contains("not a UUID");

        ProcessingResponse empty = rejectionFor(new byte[0]);
        assertThat(ExtProcClient.rejectionCode(empty)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(ExtProcClient.rejectionMessage(empty)).contains("no body");
    }

    @Test
    void headersThatEndTheStreamAreRejectedAtOnceAsMissingTheHeader() throws Exception {
        ProcessingRequest headersOnly = headersWithoutSession("Config").toBuilder()
                .setRequestHeaders(HttpHeaders.newBuilder(headersWithoutSession("Config").getRequestHeaders())
                        .setEndOfStream(true))
                .build();
        ProcessingResponse r = envoy.exchange(List.of(headersOnly)).get(0);
        assertThat(r.hasModeOverride()).isFalse();
        assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
        assertThat(r.getImmediateResponse().getDetails()).isEqualTo("scrouter_missing_session_id");
    }

    @Test
    void nonSparkPathWithoutHeaderIsRejectedWithoutAskingForTheBody() throws Exception {
        List<String[]> headers = new ArrayList<>(ExtProcClient.sparkCall("Config", null));
        headers.removeIf(h -> h[0].equals(":path"));
        headers.add(new String[] {":path", "/grpc.health.v1.Health/Check"});
        ProcessingResponse r = envoy.send(headers);
        assertThat(r.hasModeOverride()).isFalse();
        assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.UNIMPLEMENTED.value());
    }

    @Test
    void repeatedHeaderIsStillRejectedFromTheHeaders() throws Exception {
        List<String[]> headers = new ArrayList<>(ExtProcClient.sparkCall("Config", UUID.randomUUID().toString()));
        headers.add(new String[] {RouteHeaders.SESSION_ID, UUID.randomUUID().toString()});
        ProcessingResponse r = envoy.send(headers);
        assertThat(r.hasModeOverride()).isFalse();
        assertThat(ExtProcClient.rejectionCode(r)).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
    }

    @Test
    void bodyModeOverrideKeepsResponsePhasesSkippedAndAsksForBufferedPartial() {
        var mode = Responses.BODY_MODE;
        assertThat(mode.getRequestBodyMode().name()).isEqualTo("BUFFERED_PARTIAL");
        assertThat(mode.getResponseHeaderMode().name()).isEqualTo("SKIP");
        assertThat(mode.getResponseBodyMode().name()).isEqualTo("NONE");
        assertThat(mode.getRequestTrailerMode().name()).isEqualTo("SKIP");
        assertThat(mode.getResponseTrailerMode().name()).isEqualTo("SKIP");
    }
}
