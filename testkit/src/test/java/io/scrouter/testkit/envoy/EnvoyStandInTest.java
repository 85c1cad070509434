package io.scrouter.testkit.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.grpc.Status;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One test per behaviour the stand-in reproduces (the table in {@code envoy/README.md}), each against the
 * model read from the shipped {@code envoy/envoy.yaml} and a hand-written processor that provokes it. Each
 * test fails when its behaviour is taken out of the stand-in.
 */
class EnvoyStandInTest {

    static final Path ENVOY_YAML = RepoRoot.path("envoy/envoy.yaml");
    static final Path ENVOY_METADATA_YAML = RepoRoot.path("envoy/envoy-metadata.yaml");
    static final String ROUTE = "x-scrouter-upstream";
    static final ProcessingMode BODY_MODE = ProcessingMode.newBuilder()
            .setRequestHeaderMode(ProcessingMode.HeaderSendMode.SEND)
            .setResponseHeaderMode(ProcessingMode.HeaderSendMode.SKIP)
            .setRequestBodyMode(ProcessingMode.BodySendMode.BUFFERED_PARTIAL)
            .setResponseBodyMode(ProcessingMode.BodySendMode.NONE)
            .setRequestTrailerMode(ProcessingMode.HeaderSendMode.SKIP)
            .setResponseTrailerMode(ProcessingMode.HeaderSendMode.SKIP)
            .build();

    private final List<AutoCloseable> open = new ArrayList<>();
    private EnvoyModel shipped;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private <T extends AutoCloseable> T keep(T resource) {
        open.add(resource);
        return resource;
    }

    private EnvoyModel shipped() throws Exception {
        if (shipped == null) {
            shipped = EnvoyModel.of(EnvoyConfigs.bootstrap(Files.readString(ENVOY_YAML)));
        }
        return shipped;
    }

    /** Every wait in these tests: far longer than any deadline of the model, so a busy machine passes. */
    /**
     * The shipped model with a message timeout as long as the tests' waits: for tests about something else, so
     * that a processor slowed by a loaded machine is not cut off by Envoy's 200 ms. The timeout itself is tested
     * with the shipped value ({@link #unansweredMessageTimesOutWith504AsGrpcUnavailable}).
     */
    private EnvoyModel patient() throws Exception {
        return shipped().withMessageTimeout(Duration.ofMillis(waitMillis()));
    }

    private long waitMillis() throws Exception {
        return Math.max(shipped().messageTimeout().toMillis(), shipped().healthCheck().interval().toMillis()) * 20;
    }

    private EnvoyStandIn envoy(EnvoyModel model, ScriptedProcessor... processors) throws Exception {
        List<java.net.InetSocketAddress> endpoints = new ArrayList<>();
        for (ScriptedProcessor p : processors) {
            endpoints.add(p.address());
        }
        EnvoyStandIn envoy = keep(EnvoyStandIn.start(model, endpoints));
        assertThat(envoy.awaitHealthyExtProc(processors.length, Duration.ofMillis(waitMillis()))).isTrue();
        return envoy;
    }

    private static Map<String, String> session(String id) {
        return Map.of("x-spark-session-id", id);
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    // ---- the model ----------------------------------------------------------------------------------------

    @Test
    void readsEverySettingTheDataPathDependsOnFromTheShippedBootstraps() throws Exception {
        EnvoyModel header = shipped();
        assertThat(header.routeHeader()).contains(ROUTE);
        assertThat(header.routeMetadata()).isEmpty();
        // The route header, and the group header that only an authenticating filter may set.
        assertThat(header.earlyRemovedHeaders()).containsExactly(ROUTE, "x-scrouter-group");
        assertThat(header.messageTimeout()).isEqualTo(Duration.ofMillis(200));
        assertThat(header.failureModeAllow()).isFalse();
        assertThat(header.allowModeOverride()).isTrue();
        assertThat(header.allowedOverrideModes()).containsExactly(BODY_MODE);
        assertThat(header.streamWindowBytes()).isEqualTo(1 << 20);
        assertThat(header.healthCheck()).isEqualTo(new EnvoyModel.ExtProcHealthCheck(Duration.ofSeconds(2),
                Duration.ofMillis(500), 2, 1, "envoy.service.ext_proc.v3.ExternalProcessor"));

        EnvoyModel metadata = EnvoyModel.of(EnvoyConfigs.bootstrap(Files.readString(ENVOY_METADATA_YAML)));
        assertThat(metadata.routeHeader()).isEmpty();
        assertThat(metadata.routeMetadata()).contains(new EnvoyModel.MetadataKey("scrouter", "upstream"));
        assertThat(metadata.receivingNamespaces()).containsExactly("scrouter");
    }

    // ---- stream lifetime ----------------------------------------------------------------------------------

    @Test
    void processStreamStaysOpenUntilTheRequestEnds() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        replica.holdResponses(true);
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(
                ScriptedProcessor.route(ROUTE, replica.address()))));
        EnvoyStandIn envoy = envoy(shipped(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Call call = client.start("ExecutePlan", session(UUID.randomUUID().toString()));
        call.send(bytes(10));
        call.halfClose();
        assertThat(replica.started.await(waitMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // ext_proc.cc, Filter::sendRequest / onDestroy: answered, but the request is still running.
        Thread.sleep(shipped().messageTimeout().toMillis() * 2);
        assertThat(processor.streams).singleElement().satisfies(s -> assertThat(s.isEnded()).isFalse());

        replica.release();
        assertThat(call.result(waitMillis()).status().getCode()).isEqualTo(Status.Code.OK);
        ScriptedProcessor.Stream stream = processor.streams.get(0);
        assertThat(stream.ended.await(waitMillis(), TimeUnit.MILLISECONDS)).as("ended with the request").isTrue();
        assertThat(stream.cancelledByEnvoy).as("END_STREAM then a reset (Filter::closeStream)").isTrue();
    }

    @Test
    void okCloseAfterTheAnswerLetsTheRequestRunWithoutTheProcessor() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        replica.holdResponses(false);
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> {
            s.answer(ScriptedProcessor.route(ROUTE, replica.address()));
            s.closeOk();
        }));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Call call = client.start("ExecutePlan", session(UUID.randomUUID().toString()));
        call.send(bytes(10));
        call.halfClose();
        assertThat(replica.started.await(waitMillis(), TimeUnit.MILLISECONDS)).isTrue();
        replica.release();

        RawClient.Result result = call.result(waitMillis());
        assertThat(result.status().getCode()).isEqualTo(Status.Code.OK);
        assertThat(new String(result.messages().get(0))).isEqualTo("10");
        assertThat(envoy.calls()).singleElement().satisfies(c -> assertThat(c.upstream()).isEqualTo(replica.address()));
    }

    @Test
    void okCloseBeforeAnyAnswerContinuesTheRequestUnmodified() throws Exception {
        // Without the early removal, the client's own route header survives: the request carries on exactly as
        // it came (Filter::onGrpcClose, ProcessorState::clearAsyncState) and goes where that header says.
        FakeReplica replica = keep(new FakeReplica());
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.closeOk()));
        EnvoyStandIn envoy = envoy(shipped().withEarlyRemovedHeaders(List.of()), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result result = client.call("Config", Map.of(ROUTE, replica.address()), bytes(3), waitMillis());

        assertThat(result.status().getCode()).isEqualTo(Status.Code.OK);
        assertThat(replica.calls).hasSize(1);
    }

    @Test
    void errorAfterTheAnswerFailsTheRequestWith500AsGrpcUnknown() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        replica.holdResponses(false);
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(
                ScriptedProcessor.route(ROUTE, replica.address()))));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));
        RawClient.Call call = client.start("ExecutePlan", session(UUID.randomUUID().toString()));
        call.send(bytes(10));
        call.halfClose();
        assertThat(replica.started.await(waitMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // The router stopping without closing its streams (ext_proc.cc, Filter::onGrpcError, fail closed).
        processor.streams.get(0).fail(Status.UNAVAILABLE.withDescription("router going away"));

        RawClient.Result result = call.result(waitMillis());
        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNKNOWN);
        assertThat(result.status().getDescription()).as("Envoy's 500 has an empty body").isNull();
        assertThat(envoy.calls()).singleElement().satisfies(c ->
                assertThat(c.details()).isEqualTo("ext_proc_error_gRPC_error_14{router_going_away}"));
    }

    @Test
    void errorAfterTheResponseBeganResetsTheStream() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        replica.holdResponses(true);
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(
                ScriptedProcessor.route(ROUTE, replica.address()))));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));
        RawClient.Call call = client.start("ExecutePlan", session(UUID.randomUUID().toString()));
        call.send(bytes(10));
        call.halfClose();
        assertThat(replica.started.await(waitMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis());
        while (!call.gotHeaders && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(call.gotHeaders).as("the response has begun").isTrue();

        processor.streams.get(0).fail(Status.INTERNAL);

        // DownstreamFilterManager::sendLocalReply resets a stream whose response began; grpc-java reports
        // RST_STREAM(NO_ERROR) as UNAVAILABLE (GrpcUtil.Http2Error).
        RawClient.Result result = call.result(waitMillis());
        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(result.status().getDescription()).contains("RST_STREAM");
    }

    @Test
    void unansweredMessageTimesOutWith504AsGrpcUnavailable() throws Exception {
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> { }));
        EnvoyStandIn envoy = envoy(shipped(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        long started = System.nanoTime();
        RawClient.Result result = client.call("Config", session(UUID.randomUUID().toString()), bytes(3),
                waitMillis());
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        // Subject of this test is the deadline: not before message_timeout (ext_proc.cc, onMessageTimeout).
        assertThat(tookMillis).isGreaterThanOrEqualTo(shipped().messageTimeout().toMillis());
        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(envoy.calls()).singleElement().satisfies(c ->
                assertThat(c.details()).isEqualTo("ext_proc_error_per-message_timeout_exceeded"));
        assertThat(processor.streams.get(0).ended.await(waitMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    // ---- body mode ----------------------------------------------------------------------------------------

    @Test
    void bufferedPartialSendsWhatIsBufferedUpToTheWindowAsOneMessage() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> {
            if (r.hasRequestHeaders()) {
                s.answer(ScriptedProcessor.askForBody(BODY_MODE));
            } else {
                s.answer(ScriptedProcessor.routeOnBody(ROUTE, replica.address()));
            }
        }));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));
        int window = shipped().streamWindowBytes();

        // A small request: all of it, at its end.
        assertThat(client.call("Config", Map.of(), bytes(100), waitMillis()).status().isOk()).isTrue();
        ProcessingRequest small = processor.streams.get(0).received.get(1);
        assertThat(small.getRequestBody().getEndOfStream()).isTrue();
        assertThat(small.getRequestBody().getBody().size()).isEqualTo(5 + 100);

        // One message three windows long: Envoy sends what crossed the window (in 16 KiB frames), once.
        int large = 3 * window;
        RawClient.Result result = client.call("AddArtifacts", Map.of(), bytes(large), waitMillis());
        assertThat(result.status().isOk()).isTrue();
        List<ProcessingRequest> got = processor.streams.get(1).received;
        assertThat(got).hasSize(2);
        assertThat(got.get(1).getRequestBody().getEndOfStream()).isFalse();
        assertThat(got.get(1).getRequestBody().getBody().size()).isGreaterThan(window)
                .isLessThanOrEqualTo(window + HttpStream.FRAME_BYTES);
        assertThat(ByteBuffer.wrap(got.get(1).getRequestBody().getBody().toByteArray(), 1, 4).getInt())
                .as("the gRPC frame header of the message").isEqualTo(large);
        // The replica still receives the whole message.
        assertThat(replica.calls.get(1).requestBytes()).isEqualTo(large);
    }

    @Test
    void aBodyAnswerRoutesOnlyWhileTheHeadersAreStillHeld() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        // The headers are answered (so they continue to the router) and a route comes later on a body answer:
        // nobody waits for it (Filter::onReceiveMessage, spurious) and the held headers are gone.
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> {
            s.answer(ScriptedProcessor.unchanged());
            s.answer(ScriptedProcessor.routeOnBody(ROUTE, replica.address()));
        }));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result late = client.call("Config", Map.of(), bytes(3), waitMillis());

        assertThat(late.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(late.status().getDescription()).isEqualTo("no healthy upstream");
        assertThat(replica.calls).isEmpty();

        // While held (BUFFERED_PARTIAL), the same body answer routes (processHeaderMutationIfAvailable).
        processor.script((r, s) -> s.answer(r.hasRequestHeaders() ? ScriptedProcessor.askForBody(BODY_MODE)
                : ScriptedProcessor.routeOnBody(ROUTE, replica.address())));
        assertThat(client.call("Config", Map.of(), bytes(3), waitMillis()).status().isOk()).isTrue();
        assertThat(replica.calls).hasSize(1);
    }

    @Test
    void anOverrideOutsideTheAllowListIsIgnored() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        // The listed mode, but with response headers sent too: not equal on every field but request_header_mode.
        ProcessingMode unlisted = BODY_MODE.toBuilder()
                .setResponseHeaderMode(ProcessingMode.HeaderSendMode.SEND).build();
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor
                .askForBody(unlisted).toBuilder().setRequestHeaders(ScriptedProcessor.route(ROUTE, replica.address())
                        .getRequestHeaders()).build())));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        assertThat(client.call("Config", Map.of(), bytes(3), waitMillis()).status().isOk()).isTrue();

        assertThat(processor.streams.get(0).received).as("no body was sent: the override was refused").hasSize(1);
    }

    @Test
    void inStreamedModeTheHeadersGoOnAtOnceSoABodyAnswerCannotRoute() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        ProcessingMode streamed = BODY_MODE.toBuilder().setRequestBodyMode(ProcessingMode.BodySendMode.STREAMED)
                .build();
        // processor_state.cc, handleHeadersResponse: in STREAMED the headers continue with the header answer,
        // so a route on a later body answer is never applied (handleStreamedBodyResponse ignores it).
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(r.hasRequestHeaders()
                ? ScriptedProcessor.askForBody(streamed) : ScriptedProcessor.routeOnBody(ROUTE, replica.address()))));
        EnvoyStandIn envoy = envoy(shipped().withAllowedOverrideModes(List.of(BODY_MODE, streamed)), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result result = client.call("Config", Map.of(), bytes(3), waitMillis());

        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(replica.calls).isEmpty();
    }

    // ---- header rules -------------------------------------------------------------------------------------

    @Test
    void disallowedHeaderMutationsAreDroppedSilently() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        // With http_header_name unset, ORIGINAL_DST reads x-envoy-original-dst-host; a processor may not set it.
        String envoyHeader = "x-envoy-original-dst-host";
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor.headersAnswer(
                ScriptedProcessor.set(envoyHeader, replica.address()).toBuilder()
                        .addAllSetHeaders(ScriptedProcessor.set(":authority", "elsewhere").getSetHeadersList())
                        .addAllSetHeaders(ScriptedProcessor.set("host", "elsewhere").getSetHeadersList())
                        .build()))));
        EnvoyStandIn envoy = envoy(shipped().withRouteHeader(envoyHeader), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result result = client.call("Config", Map.of(), bytes(3), waitMillis());

        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(replica.calls).isEmpty();
        assertThat(envoy.rejectedHeaderMutations()).isEqualTo(3);
    }

    @Test
    void earlyHeaderMutationRemovesAClientRouteHeaderBeforeExtProcAndRouting() throws Exception {
        FakeReplica chosenByClient = keep(new FakeReplica());
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor.unchanged())));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result result = client.call("Config", Map.of(ROUTE, chosenByClient.address()), bytes(3),
                waitMillis());

        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(chosenByClient.calls).as("the client's choice of upstream never counts").isEmpty();
        assertThat(processor.streams.get(0).received.get(0).getRequestHeaders().getHeaders().getHeadersList())
                .as("ext_proc never sees it either").noneMatch(h -> h.getKey().equals(ROUTE));
    }

    // ---- ORIGINAL_DST -------------------------------------------------------------------------------------

    @Test
    void originalDstTakesTheMetadataKeyBeforeTheHeader() throws Exception {
        FakeReplica byMetadata = keep(new FakeReplica());
        FakeReplica byHeader = keep(new FakeReplica());
        EnvoyModel metadata = EnvoyModel.of(EnvoyConfigs.bootstrap(Files.readString(ENVOY_METADATA_YAML)))
                .withRouteHeader(ROUTE);
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor
                .metadata("scrouter", "upstream", byMetadata.address()).toBuilder()
                .setRequestHeaders(ScriptedProcessor.route(ROUTE, byHeader.address()).getRequestHeaders())
                .build())));
        EnvoyStandIn envoy = envoy(metadata, processor);
        RawClient client = keep(new RawClient(envoy.port()));

        assertThat(client.call("Config", Map.of(), bytes(3), waitMillis()).status().isOk()).isTrue();

        assertThat(byMetadata.calls).hasSize(1);
        assertThat(byHeader.calls).isEmpty();
        assertThat(envoy.calls()).singleElement().satisfies(c -> assertThat(c.routeSource()).isEqualTo("metadata"));
    }

    @Test
    void metadataOfANamespaceNotListedIsDropped() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        EnvoyModel listed = EnvoyModel.of(EnvoyConfigs.bootstrap(Files.readString(ENVOY_METADATA_YAML)));
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor
                .metadata("scrouter", "upstream", replica.address()))));
        EnvoyStandIn unlistedEnvoy = envoy(listed.withReceivingNamespaces(java.util.Set.of()), processor);
        EnvoyStandIn listedEnvoy = envoy(listed, processor);

        // ext_proc.cc, Filter::setDynamicMetadata: without metadata_options every namespace is dropped.
        assertThat(keep(new RawClient(unlistedEnvoy.port())).call("Config", Map.of(), bytes(3), waitMillis())
                .status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(replica.calls).isEmpty();
        assertThat(keep(new RawClient(listedEnvoy.port())).call("Config", Map.of(), bytes(3), waitMillis())
                .status().isOk()).isTrue();
        assertThat(replica.calls).hasSize(1);
    }

    @Test
    void aMissingOrInvalidUpstreamGives503AndDialsNothing() throws Exception {
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor.route(ROUTE,
                "spark-0.example:15002"))));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result invalid = client.call("Config", Map.of(), bytes(3), waitMillis());
        processor.script((r, s) -> s.answer(ScriptedProcessor.unchanged()));
        RawClient.Result missing = client.call("Config", Map.of(), bytes(3), waitMillis());

        for (RawClient.Result r : List.of(invalid, missing)) {
            assertThat(r.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(r.status().getDescription()).isEqualTo("no healthy upstream");
        }
        // No upstream was chosen, so nothing was dialled (least of all the stand-in's own listener).
        assertThat(envoy.calls()).hasSize(2).allSatisfy(c -> assertThat(c.upstream()).isNull());
    }

    @Test
    void anUpstreamThatRefusesTheConnectionGives503AndNoRetry() throws Exception {
        FakeReplica gone = new FakeReplica();
        String address = gone.address();
        gone.close();
        ScriptedProcessor processor = keep(new ScriptedProcessor((r, s) -> s.answer(ScriptedProcessor.route(ROUTE,
                address))));
        EnvoyStandIn envoy = envoy(patient(), processor);
        RawClient client = keep(new RawClient(envoy.port()));

        RawClient.Result result = client.call("Config", Map.of(), bytes(3), waitMillis());

        // router.cc, Filter::onUpstreamReset: 503 before any response headers; no retry_policy, no retry.
        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(result.status().getDescription()).startsWith("upstream connect error");
        assertThat(processor.streams).as("decided once").hasSize(1);
    }

    // ---- the ext_proc cluster -----------------------------------------------------------------------------

    @Test
    void anEndpointReportingNotServingGetsNoNewStreams() throws Exception {
        FakeReplica replica = keep(new FakeReplica());
        ScriptedProcessor.Script routes = (r, s) -> {
            s.answer(ScriptedProcessor.route(ROUTE, replica.address()));
            s.closeOk();
        };
        ScriptedProcessor draining = keep(new ScriptedProcessor(routes));
        ScriptedProcessor staying = keep(new ScriptedProcessor(routes));
        EnvoyStandIn envoy = envoy(patient(), draining, staying);

        draining.serving(false);
        // NOT_SERVING marks the host unhealthy at its next check (GrpcActiveHealthCheckSession::onRpcComplete).
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis());
        while (envoy.healthyExtProcEndpoints() != 1 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(envoy.healthyExtProcEndpoints()).isEqualTo(1);
        int before = draining.streams.size();
        RawClient client = keep(new RawClient(envoy.port()));
        for (int i = 0; i < 20; i++) {
            assertThat(client.call("Config", Map.of(), bytes(1), waitMillis()).status().isOk()).isTrue();
        }
        assertThat(draining.streams).hasSize(before);
        assertThat(staying.streams).hasSizeGreaterThanOrEqualTo(20);
    }

    @Test
    void noEndpointAtAllFailsTheRequestWith500() throws Exception {
        ScriptedProcessor gone = new ScriptedProcessor((r, s) -> { });
        java.net.InetSocketAddress address = gone.address();
        gone.close();
        EnvoyStandIn envoy = keep(EnvoyStandIn.start(shipped(), List.of(address)));
        RawClient client = keep(new RawClient(envoy.port()));

        // In panic (no healthy host) the stream still goes to the one host, whose connection is refused.
        RawClient.Result result = client.call("Config", Map.of(), bytes(1), waitMillis());

        assertThat(result.status().getCode()).isEqualTo(Status.Code.UNKNOWN);
        assertThat(envoy.calls()).singleElement().satisfies(c -> assertThat(c.upstream()).isNull());
    }
}
