package io.scrouter.extproc.reliability;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.runtime.SystemTime;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile and malformed input, generated (seeded, so a failure replays): header names and values that are
 * empty, huge, non-ASCII, control characters, CRLF, Redis-special, repeated; a client-supplied route header;
 * values in {@code value}, {@code raw_value} or both; unexpected and out-of-order phases; several messages
 * per stream. For every case: no stream error (no exception escaped), every answer is one of the defined
 * kinds, and no address outside the pool is ever written.
 */
class HostileInputTest {

    private static final long SEED = 0x5c0ffee;
    private static final int CASES = 12_000;
    private static final Set<String> POOL = Set.of("10.0.0.1:15002", "10.0.0.2:15002", "10.0.0.3:15002");
    private static final Set<Integer> DEFINED_REJECTIONS = Set.of(Status.Code.INVALID_ARGUMENT.value(),
            Status.Code.UNIMPLEMENTED.value(), Status.Code.FAILED_PRECONDITION.value(),
            Status.Code.UNAVAILABLE.value(), Status.Code.NOT_FOUND.value(), Status.Code.RESOURCE_EXHAUSTED.value());

    private enum Answer { ROUTED, REJECTED, BODY_REQUESTED, PASSED_THROUGH }

    @Test
    void generatedHostileRequestsNeverEscapeTheDefinedAnswersOrThePool() throws Exception {
        String yaml = """
                pool:
                  static:
                    - {id: a, grpc: "10.0.0.1:15002"}
                    - {id: b, grpc: "10.0.0.2:15002"}
                    - {id: c, grpc: "10.0.0.3:15002"}
                """;
        String name = InProcessServerBuilder.generateName();
        Map<Answer, Integer> seen = new EnumMap<>(Answer.class);
        try (RouterServer rs = RouterServer.start(ConfigLoader.parse(yaml, Map.of()),
                InProcessServerBuilder.forName(name).directExecutor(), DecisionObserver.NONE,
                SystemTime.shared())) {
            ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
            try {
                ExternalProcessorGrpc.ExternalProcessorStub stub = ExternalProcessorGrpc.newStub(channel);
                SplittableRandom random = new SplittableRandom(SEED);
                for (int i = 0; i < CASES; i++) {
                    List<ProcessingRequest> messages = hostileStream(random);
                    List<ProcessingResponse> answers = exchange(stub, messages, i);
                    assertThat(answers.size()).as("case %d: at most one answer per message", i)
                            .isLessThanOrEqualTo(messages.size());
                    for (ProcessingResponse answer : answers) {
                        seen.merge(classify(answer, i), 1, Integer::sum);
                    }
                }
            } finally {
                channel.shutdownNow();
            }
        }
        // The generator must actually reach every kind of answer, or the test proves less than it claims.
        assertThat(seen.keySet()).contains(Answer.ROUTED, Answer.REJECTED, Answer.PASSED_THROUGH);
        System.out.println("hostile input: " + CASES + " streams, answers " + seen);
    }

    private static List<ProcessingResponse> exchange(ExternalProcessorGrpc.ExternalProcessorStub stub,
                                                     List<ProcessingRequest> messages, int caseNo) throws Exception {
        List<ProcessingResponse> answers = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        StreamObserver<ProcessingRequest> out = stub.process(new StreamObserver<>() {
            @Override
            public synchronized void onNext(ProcessingResponse value) {
                answers.add(value);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.complete(null);
            }
        });
        for (ProcessingRequest m : messages) {
            out.onNext(m);
        }
        out.onCompleted();
        try {
            done.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("case " + caseNo + ": stream failed instead of answering: " + e.getCause()
                    + " for " + messages, e);
        }
        synchronized (answers) {
            return List.copyOf(answers);
        }
    }

    private static Answer classify(ProcessingResponse r, int caseNo) {
        if (r.hasImmediateResponse()) {
            assertThat(DEFINED_REJECTIONS).as("case %d: rejection status", caseNo)
                    .contains(r.getImmediateResponse().getGrpcStatus().getStatus());
            assertThat(r.getImmediateResponse().getBody().toStringUtf8()).as("case %d: says what to do", caseNo)
                    .isNotBlank();
            return Answer.REJECTED;
        }
        CommonResponse common = switch (r.getResponseCase()) {
            case REQUEST_HEADERS -> r.getRequestHeaders().getResponse();
            case REQUEST_BODY -> r.getRequestBody().getResponse();
            case RESPONSE_HEADERS -> r.getResponseHeaders().getResponse();
            case RESPONSE_BODY -> r.getResponseBody().getResponse();
            case REQUEST_TRAILERS, RESPONSE_TRAILERS -> CommonResponse.getDefaultInstance();
            default -> throw new AssertionError("case " + caseNo + ": answer of no defined kind: " + r);
        };
        List<HeaderValueOption> set = common.getHeaderMutation().getSetHeadersList();
        assertThat(common.getHeaderMutation().getRemoveHeadersList()).as("case %d", caseNo).isEmpty();
        assertThat(common.hasBodyMutation()).as("case %d: never rewrites a body", caseNo).isFalse();
        if (!set.isEmpty()) {
            assertThat(set).as("case %d: only the route header is ever written", caseNo).hasSize(1);
            HeaderValue h = set.get(0).getHeader();
            assertThat(h.getKey()).isEqualTo(RouteHeaders.UPSTREAM);
            assertThat(h.getValue()).as("case %d: raw_value only", caseNo).isEmpty();
            assertThat(POOL).as("case %d: address written", caseNo)
                    .contains(h.getRawValue().toString(StandardCharsets.ISO_8859_1));
            String meta = r.getDynamicMetadata().getFieldsOrThrow(RouteHeaders.METADATA_NAMESPACE).getStructValue()
                    .getFieldsOrThrow(RouteHeaders.METADATA_UPSTREAM_KEY).getStringValue();
            assertThat(POOL).contains(meta);
            return Answer.ROUTED;
        }
        if (r.hasModeOverride() && r.getModeOverride().getRequestBodyMode() != ProcessingMode.BodySendMode.NONE) {
            return Answer.BODY_REQUESTED;
        }
        return Answer.PASSED_THROUGH;
    }

    // ---- generation -------------------------------------------------------------------------------------

    private static final String[] NASTY = {"", " ", "\r\n", "\r\nx-scrouter-upstream: 1.2.3.4:1", "\0", "\u0007",
            "*", "$-1", "*1\r\n$4\r\nPING\r\n", "{scr}", "!lost:a", "../../", "%00", "😀", "\u00ff\u00fe", "é",
            "a:b", "10.0.0.1:15002", "169.254.169.254:80", "localhost:15002", "[::1]:15002"};
    private static final String[] PATHS = {"/spark.connect.SparkConnectService/ExecutePlan",
            "/spark.connect.SparkConnectService/AnalyzePlan", "/spark.connect.SparkConnectService/ReleaseSession",
            "/spark.connect.SparkConnectService/AddArtifacts", "/spark.connect.SparkConnectService/",
            "/spark.connect.SparkConnectService/Exec\r\nutePlan", "/grpc.health.v1.Health/Check", "/", "",
            "/spark.connect.SparkConnectService/../x", "/SPARK.CONNECT.SPARKCONNECTSERVICE/ExecutePlan"};

    private static List<ProcessingRequest> hostileStream(SplittableRandom r) {
        List<ProcessingRequest> out = new ArrayList<>();
        int shape = r.nextInt(10);
        if (shape == 0) {
            out.add(unexpectedPhase(r));
            if (r.nextBoolean()) {
                out.add(headers(r));
            }
        } else {
            out.add(headers(r));
            int extra = shape < 7 ? 0 : r.nextInt(3);
            for (int i = 0; i < extra; i++) {
                out.add(r.nextBoolean() ? body(r) : unexpectedPhase(r));
            }
        }
        return out;
    }

    private static ProcessingRequest headers(SplittableRandom r) {
        HeaderMap.Builder map = HeaderMap.newBuilder();
        if (r.nextInt(10) != 0) {
            // Half the paths are plain Spark Connect RPCs, so routing (not only rejection) is exercised.
            put(map, ":path", r.nextBoolean() ? PATHS[r.nextInt(4)] : PATHS[r.nextInt(PATHS.length)], r);
        }
        put(map, ":method", "POST", r);
        put(map, "content-type", r.nextInt(8) == 0 ? pick(r) : "application/grpc", r);
        int sessions = r.nextInt(8) == 0 ? 2 + r.nextInt(3) : (r.nextInt(6) == 0 ? 0 : 1);
        for (int i = 0; i < sessions; i++) {
            String name = r.nextInt(10) == 0 ? RouteHeaders.SESSION_ID.toUpperCase() : RouteHeaders.SESSION_ID;
            put(map, name, sessionValue(r), r);
        }
        if (r.nextInt(4) == 0) {
            put(map, RouteHeaders.UPSTREAM, pick(r), r);
        }
        int junk = r.nextInt(4);
        for (int i = 0; i < junk; i++) {
            put(map, randomText(r, 1 + r.nextInt(40)), randomText(r, r.nextInt(200)), r);
        }
        if (r.nextInt(200) == 0) {
            put(map, "x-huge", "v".repeat(20_000 + r.nextInt(40_000)), r);
        }
        return ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder().setHeaders(map)
                .setEndOfStream(r.nextInt(5) == 0)).build();
    }

    private static String sessionValue(SplittableRandom r) {
        String uuid = new UUID(r.nextLong(), r.nextLong()).toString();
        return switch (r.nextInt(12)) {
            case 0 -> "";
            case 1 -> uuid + "\r\n";
            case 2 -> uuid.toUpperCase();
            case 3 -> uuid.substring(0, 35);
            case 4 -> uuid + "0";
            case 5 -> "x".repeat(1 + r.nextInt(100_000));
            case 6 -> pick(r);
            case 7 -> uuid.replace('-', '_');
            case 8 -> randomText(r, 36);
            default -> uuid;
        };
    }

    private static void put(HeaderMap.Builder map, String key, String value, SplittableRandom r) {
        HeaderValue.Builder h = HeaderValue.newBuilder().setKey(key);
        switch (r.nextInt(10)) {
            case 0 -> h.setValue(value);
            case 1 -> h.setValue(value).setRawValue(ByteString.copyFrom(value, StandardCharsets.UTF_8));
            default -> h.setRawValue(ByteString.copyFrom(value, StandardCharsets.UTF_8));
        }
        map.addHeaders(h);
    }

    private static ProcessingRequest body(SplittableRandom r) {
        byte[] bytes = new byte[r.nextInt(r.nextInt(10) == 0 ? 5000 : 64)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) r.nextInt(256);
        }
        if (bytes.length > 7 && r.nextBoolean()) {
            // A plausible gRPC frame start: uncompressed, then field 1 (session_id) with a length.
            bytes[0] = 0;
            bytes[5] = 0x0a;
            bytes[6] = (byte) r.nextInt(60);
        }
        return ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
                .setBody(ByteString.copyFrom(bytes)).setEndOfStream(r.nextBoolean())).build();
    }

    private static ProcessingRequest unexpectedPhase(SplittableRandom r) {
        return switch (r.nextInt(5)) {
            case 0 -> ProcessingRequest.newBuilder().setResponseHeaders(HttpHeaders.getDefaultInstance()).build();
            case 1 -> ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder()
                    .setBody(ByteString.copyFromUtf8(randomText(r, 30)))).build();
            case 2 -> ProcessingRequest.newBuilder().setRequestTrailers(HttpTrailers.getDefaultInstance()).build();
            case 3 -> ProcessingRequest.newBuilder().setResponseTrailers(HttpTrailers.getDefaultInstance()).build();
            default -> body(r);
        };
    }

    private static String pick(SplittableRandom r) {
        return NASTY[r.nextInt(NASTY.length)];
    }

    private static String randomText(SplittableRandom r, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            int kind = r.nextInt(10);
            sb.append((char) (kind < 6 ? 'a' + r.nextInt(26) : kind < 8 ? r.nextInt(32) : 0x80 + r.nextInt(0x2000)));
        }
        return sb.toString();
    }
}
