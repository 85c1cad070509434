package io.scrouter.extproc.reliability;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.client.ExtProcClient;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.DecisionObserver;
import io.scrouter.extproc.envoy.RouteHeaders;
import io.scrouter.extproc.runtime.SystemTime;
import io.scrouter.extproc.testing.Patience;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile and malformed input, generated (seeded, so a failure replays): header names and values that are
 * empty, huge, non-ASCII, control characters, CRLF, Redis-special, repeated; a client-supplied route header;
 * values in {@code value}, {@code raw_value} or both; unexpected and out-of-order phases; several messages
 * per stream. For every case: no stream error (no exception escaped), every message gets exactly the answers
 * the protocol owes it (see {@link #owed}), no address outside the pool is ever written, and a request that
 * carries the route header itself is routed with that header overwritten, or rejected: never passed through.
 */
class HostileInputTest {

    private static final long SEED = 0x5c0ffee;
    private static final int CASES = 12_000;
    private static final Set<String> POOL = Set.of("10.0.0.1:15002", "10.0.0.2:15002", "10.0.0.3:15002");
    private static final Set<Integer> DEFINED_REJECTIONS = Set.of(Status.Code.INVALID_ARGUMENT.value(),
            Status.Code.UNIMPLEMENTED.value(), Status.Code.FAILED_PRECONDITION.value(),
            Status.Code.UNAVAILABLE.value(), Status.Code.NOT_FOUND.value(), Status.Code.RESOURCE_EXHAUSTED.value());

    /** What one answer is, read from the answer alone. */
    private enum Answer {
        /** The route header set on the request headers answer. */
        ROUTE_ON_HEADERS,
        /** The route header set on a request body answer (body mode). */
        ROUTE_ON_BODY,
        /** An immediate response with a gRPC status. */
        REJECT,
        /** A request headers answer that changes nothing and asks for the body ({@code mode_override}). */
        ASK_FOR_BODY,
        /** A request body answer that changes nothing. */
        BODY_UNCHANGED,
        /** An answer that changes nothing, to a phase of that kind. */
        PASS_REQUEST_HEADERS, PASS_RESPONSE_HEADERS, PASS_RESPONSE_BODY, PASS_REQUEST_TRAILERS, PASS_RESPONSE_TRAILERS
    }

    private static final Set<Answer> DECISION_ON_HEADERS = EnumSet.of(Answer.ROUTE_ON_HEADERS, Answer.REJECT);

    @Test
    void generatedHostileRequestsGetTheAnswersTheProtocolOwesThemAndNeverLeaveThePool() throws Exception {
        String yaml = """
                pool:
                  static:
                    - {id: a, grpc: "10.0.0.1:15002"}
                    - {id: b, grpc: "10.0.0.2:15002"}
                    - {id: c, grpc: "10.0.0.3:15002"}
                """;
        String name = InProcessServerBuilder.generateName();
        Map<Answer, Integer> seen = new EnumMap<>(Answer.class);
        Map<Answer, Integer> forgedRouteHeader = new EnumMap<>(Answer.class);
        RouterConfig config = ConfigLoader.parse(yaml, Map.of());
        try (RouterServer rs = RouterServer.start(config, InProcessServerBuilder.forName(name).directExecutor(),
                DecisionObserver.NONE, SystemTime.shared())) {
            ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
            try {
                ExtProcClient envoy = new ExtProcClient(channel, Patience.decision(config));
                SplittableRandom random = new SplittableRandom(SEED);
                for (int i = 0; i < CASES; i++) {
                    List<ProcessingRequest> messages = asEnvoyEndsIt(hostileStream(random));
                    List<ProcessingResponse> answers = exchange(envoy, messages, i);
                    List<Answer> kinds = new ArrayList<>();
                    for (ProcessingResponse answer : answers) {
                        kinds.add(classify(answer, i));
                    }
                    List<List<Set<Answer>>> candidates = owed(messages);
                    int caseNo = i;
                    assertThat(candidates).as("case %d: answers %s to %s", caseNo, kinds, describe(messages))
                            .anySatisfy(owed -> assertThat(matches(owed, kinds)).isTrue());
                    kinds.forEach(k -> seen.merge(k, 1, Integer::sum));
                    if (firstHeadersCarryRouteHeader(messages)) {
                        // Routed (the client's value overwritten, checked in classify) or rejected, never passed on.
                        Answer decision = kinds.stream().filter(k -> k == Answer.ROUTE_ON_HEADERS
                                || k == Answer.ROUTE_ON_BODY || k == Answer.REJECT).findFirst().orElse(null);
                        assertThat(decision).as("case %d: request carrying the route header, answered %s", caseNo,
                                kinds).isNotNull();
                        forgedRouteHeader.merge(decision, 1, Integer::sum);
                    }
                }
            } finally {
                channel.shutdownNow();
            }
        }
        // The generator must actually reach every kind of answer, or the test proves less than it claims.
        assertThat(seen.keySet()).contains(Answer.ROUTE_ON_HEADERS, Answer.ROUTE_ON_BODY, Answer.REJECT,
                Answer.ASK_FOR_BODY, Answer.BODY_UNCHANGED, Answer.PASS_RESPONSE_HEADERS);
        assertThat(forgedRouteHeader.keySet()).contains(Answer.ROUTE_ON_HEADERS, Answer.REJECT);
        System.out.println("hostile input: " + CASES + " streams, answers " + seen
                + "; requests carrying the route header: " + forgedRouteHeader);
    }

    // ---- what the protocol owes a stream ------------------------------------------------------------------

    /**
     * The answers owed to a stream, in order, one set of acceptable kinds per answer. Written from the ext_proc
     * protocol as Envoy drives it and the router's contract (README, "Routing rules"; {@code ProcessStream}'s
     * class comment), not from the router's code:
     * <ul>
     *   <li>Request headers are answered once. With a session header, or without one on a request that is not
     *       a Spark Connect RPC or has no body, the answer is the decision: a route or a rejection, and the
     *       stream is over. A Spark Connect RPC without the header that has a body is asked for its body.</li>
     *   <li>In body mode, each body message is owed one answer, in order: the one that completes the session
     *       id (at the latest one with {@code end_of_stream}) gets the decision; a route goes on the first owed
     *       answer and the others follow unchanged; after a rejection nothing more is owed.</li>
     *   <li>Any phase the router did not ask for (headers again, a body before headers, response phases,
     *       trailers) is answered at once, unchanged, with an answer of its own kind.</li>
     *   <li>After the decision the stream is closed: nothing more is answered.</li>
     * </ul>
     * Which body message completes the id depends on its bytes, so every possibility is returned; the answers
     * must match one of them.
     */
    private static List<List<Set<Answer>>> owed(List<ProcessingRequest> messages) {
        int bodyModeBodies = 0;
        boolean inBody = false;
        boolean decided = false;
        int lastDecidable = Integer.MAX_VALUE;
        for (ProcessingRequest m : messages) {
            if (decided) {
                break;
            }
            if (m.hasRequestHeaders() && !inBody) {
                if (goesToBodyMode(m.getRequestHeaders())) {
                    inBody = true;
                } else {
                    decided = true;
                }
            } else if (m.hasRequestBody() && inBody) {
                bodyModeBodies++;
                if (m.getRequestBody().getEndOfStream()) {
                    lastDecidable = Math.min(lastDecidable, bodyModeBodies);
                    break;
                }
            }
        }
        List<List<Set<Answer>>> candidates = new ArrayList<>();
        if (!inBody) {
            candidates.add(owedIfDecidedAt(messages, 0, null));
            return candidates;
        }
        for (int j = 1; j <= Math.min(bodyModeBodies, lastDecidable); j++) {
            candidates.add(owedIfDecidedAt(messages, j, Answer.ROUTE_ON_BODY));
            candidates.add(owedIfDecidedAt(messages, j, Answer.REJECT));
        }
        return candidates;
    }

    /** The answers owed if body message {@code decidedAt} (1-based, in body mode) gets {@code decision}. */
    private static List<Set<Answer>> owedIfDecidedAt(List<ProcessingRequest> messages, int decidedAt,
                                                     Answer decision) {
        List<Set<Answer>> owed = new ArrayList<>();
        boolean inBody = false;
        int bodies = 0;
        for (ProcessingRequest m : messages) {
            switch (m.getRequestCase()) {
                case REQUEST_HEADERS -> {
                    if (inBody) {
                        owed.add(EnumSet.of(Answer.PASS_REQUEST_HEADERS));
                    } else if (goesToBodyMode(m.getRequestHeaders())) {
                        owed.add(EnumSet.of(Answer.ASK_FOR_BODY));
                        inBody = true;
                    } else {
                        owed.add(DECISION_ON_HEADERS);
                        return owed;
                    }
                }
                case REQUEST_BODY -> {
                    if (!inBody) {
                        owed.add(EnumSet.of(Answer.BODY_UNCHANGED));
                    } else if (++bodies == decidedAt) {
                        owed.add(EnumSet.of(decision));
                        if (decision == Answer.ROUTE_ON_BODY) {
                            for (int held = 1; held < decidedAt; held++) {
                                owed.add(EnumSet.of(Answer.BODY_UNCHANGED));
                            }
                        }
                        return owed;
                    }
                }
                case RESPONSE_HEADERS -> owed.add(EnumSet.of(Answer.PASS_RESPONSE_HEADERS));
                case RESPONSE_BODY -> owed.add(EnumSet.of(Answer.PASS_RESPONSE_BODY));
                case REQUEST_TRAILERS -> owed.add(EnumSet.of(Answer.PASS_REQUEST_TRAILERS));
                case RESPONSE_TRAILERS -> owed.add(EnumSet.of(Answer.PASS_RESPONSE_TRAILERS));
                default -> throw new AssertionError("generator produced " + m.getRequestCase());
            }
        }
        return owed;
    }

    private static boolean matches(List<Set<Answer>> owed, List<Answer> answers) {
        if (owed.size() != answers.size()) {
            return false;
        }
        for (int i = 0; i < owed.size(); i++) {
            if (!owed.get(i).contains(answers.get(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * A Spark Connect RPC ({@code /spark.connect.SparkConnectService/<Method>}) without any session header
     * (header names compare case-insensitively) whose body is still to come: its session id is in the body.
     */
    private static boolean goesToBodyMode(HttpHeaders headers) {
        String path = value(headers, ":path");
        return !headers.getEndOfStream() && count(headers, RouteHeaders.SESSION_ID) == 0 && path != null
                && SPARK_RPC_PATHS.contains(path);
    }

    private static boolean firstHeadersCarryRouteHeader(List<ProcessingRequest> messages) {
        return messages.stream().filter(ProcessingRequest::hasRequestHeaders).findFirst()
                .map(m -> count(m.getRequestHeaders(), RouteHeaders.UPSTREAM) > 0).orElse(false);
    }

    private static int count(HttpHeaders headers, String name) {
        return (int) headers.getHeaders().getHeadersList().stream().filter(h -> h.getKey().equalsIgnoreCase(name))
                .count();
    }

    /** Envoy sends values in {@code raw_value}; a client filling {@code value} only is read from there. */
    private static String value(HttpHeaders headers, String name) {
        for (HeaderValue h : headers.getHeaders().getHeadersList()) {
            if (h.getKey().equals(name)) {
                return h.getRawValue().isEmpty() ? h.getValue() : h.getRawValue().toString(StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /**
     * Envoy always ends a request body it sends with {@code end_of_stream}: a generated stream left in body mode
     * without one gets it, so a decision is owed.
     */
    private static List<ProcessingRequest> asEnvoyEndsIt(List<ProcessingRequest> messages) {
        boolean inBody = false;
        boolean decided = false;
        for (ProcessingRequest m : messages) {
            if (m.hasRequestHeaders() && !inBody && !decided) {
                inBody = goesToBodyMode(m.getRequestHeaders());
                decided = !inBody;
            } else if (m.hasRequestBody() && inBody && m.getRequestBody().getEndOfStream()) {
                return messages;
            }
        }
        if (!inBody) {
            return messages;
        }
        List<ProcessingRequest> ended = new ArrayList<>(messages);
        ended.add(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder().setEndOfStream(true)).build());
        return ended;
    }

    private static String describe(List<ProcessingRequest> messages) {
        return messages.stream().map(m -> m.getRequestCase() + (m.hasRequestBody()
                ? "(" + m.getRequestBody().getBody().size() + " bytes" + (m.getRequestBody().getEndOfStream() ? ", end"
                : "") + ")" : "")).toList().toString();
    }

    // ---- the exchange and what one answer is ---------------------------------------------------------------

    /** Sends one case's messages on one stream, half-closes, and collects every answer until the router closes. */
    private static List<ProcessingResponse> exchange(ExtProcClient envoy, List<ProcessingRequest> messages, int caseNo) {
        try {
            return envoy.exchangeUntilClosed(messages);
        } catch (Exception e) {
            throw new AssertionError("case " + caseNo + ": stream failed instead of answering: "
                    + (e.getCause() != null ? e.getCause() : e) + " for " + messages, e);
        }
    }

    private static Answer classify(ProcessingResponse r, int caseNo) {
        if (r.hasImmediateResponse()) {
            assertThat(DEFINED_REJECTIONS).as("case %d: rejection status", caseNo)
                    .contains(r.getImmediateResponse().getGrpcStatus().getStatus());
            assertThat(r.getImmediateResponse().getBody().toStringUtf8()).as("case %d: says what to do", caseNo)
                    .isNotBlank();
            return Answer.REJECT;
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
        boolean asksForBody = r.hasModeOverride()
                && r.getModeOverride().getRequestBodyMode() != ProcessingMode.BodySendMode.NONE;
        if (!set.isEmpty()) {
            assertThat(set).as("case %d: only the route header is ever written", caseNo).hasSize(1);
            HeaderValueOption option = set.get(0);
            HeaderValue h = option.getHeader();
            assertThat(h.getKey()).isEqualTo(RouteHeaders.UPSTREAM);
            assertThat(h.getValue()).as("case %d: raw_value only", caseNo).isEmpty();
            // A value the client sent in the same header must be replaced, not kept beside ours (Envoy's
            // HeaderValueOption.append_action).
            assertThat(option.getAppendAction()).as("case %d: overwrites", caseNo)
                    .isEqualTo(HeaderValueOption.HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD);
            assertThat(POOL).as("case %d: address written", caseNo)
                    .contains(h.getRawValue().toString(StandardCharsets.ISO_8859_1));
            String meta = r.getDynamicMetadata().getFieldsOrThrow(RouteHeaders.METADATA_NAMESPACE).getStructValue()
                    .getFieldsOrThrow(RouteHeaders.METADATA_UPSTREAM_KEY).getStringValue();
            assertThat(POOL).contains(meta);
            assertThat(asksForBody).as("case %d: a route ends the stream", caseNo).isFalse();
            return switch (r.getResponseCase()) {
                case REQUEST_HEADERS -> Answer.ROUTE_ON_HEADERS;
                case REQUEST_BODY -> Answer.ROUTE_ON_BODY;
                default -> throw new AssertionError("case " + caseNo + ": route on a " + r.getResponseCase()
                        + " answer, which Envoy applies to no request");
            };
        }
        if (asksForBody) {
            assertThat(r.getResponseCase()).as("case %d: body asked for on the headers answer", caseNo)
                    .isEqualTo(ProcessingResponse.ResponseCase.REQUEST_HEADERS);
            return Answer.ASK_FOR_BODY;
        }
        assertThat(r.hasModeOverride()).as("case %d: pass-through changes no mode", caseNo).isFalse();
        return switch (r.getResponseCase()) {
            case REQUEST_HEADERS -> Answer.PASS_REQUEST_HEADERS;
            case REQUEST_BODY -> Answer.BODY_UNCHANGED;
            case RESPONSE_HEADERS -> Answer.PASS_RESPONSE_HEADERS;
            case RESPONSE_BODY -> Answer.PASS_RESPONSE_BODY;
            case REQUEST_TRAILERS -> Answer.PASS_REQUEST_TRAILERS;
            case RESPONSE_TRAILERS -> Answer.PASS_RESPONSE_TRAILERS;
            default -> throw new AssertionError("case " + caseNo + ": " + r);
        };
    }

    // ---- generation -------------------------------------------------------------------------------------

    private static final String[] NASTY = {"", " ", "\r\n", "\r\nx-scrouter-upstream: 1.2.3.4:1", "\0", "\u0007",
            "*", "$-1", "*1\r\n$4\r\nPING\r\n", "{scr}", "!lost:a", "../../", "%00", "😀", "\u00ff\u00fe", "é",
            "a:b", "10.0.0.1:15002", "169.254.169.254:80", "localhost:15002", "[::1]:15002"};
    /** Spark Connect RPCs: {@code /spark.connect.SparkConnectService/<Method>} (README, "Routing rules"). */
    private static final List<String> SPARK_RPC_PATHS = List.of("/spark.connect.SparkConnectService/ExecutePlan",
            "/spark.connect.SparkConnectService/AnalyzePlan", "/spark.connect.SparkConnectService/ReleaseSession",
            "/spark.connect.SparkConnectService/AddArtifacts");
    /** Paths that are not one: no method, a bad method name, another service, another case. */
    private static final List<String> OTHER_PATHS = List.of("/spark.connect.SparkConnectService/",
            "/spark.connect.SparkConnectService/Exec\r\nutePlan", "/grpc.health.v1.Health/Check", "/", "",
            "/spark.connect.SparkConnectService/../x", "/SPARK.CONNECT.SPARKCONNECTSERVICE/ExecutePlan");

    private static List<ProcessingRequest> hostileStream(SplittableRandom r) {
        List<ProcessingRequest> out = new ArrayList<>();
        int shape = r.nextInt(10);
        if (shape == 9 && r.nextBoolean()) {
            return splitSessionIdInBody(r);
        }
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
            put(map, ":path", r.nextInt(3) != 0 ? SPARK_RPC_PATHS.get(r.nextInt(SPARK_RPC_PATHS.size()))
                    : OTHER_PATHS.get(r.nextInt(OTHER_PATHS.size())), r);
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

    /**
     * A Spark Connect call without the session header whose body's first bytes (frame header, session_id) come
     * in several body messages, as a slow client's may; hostile phases are mixed in between.
     */
    private static List<ProcessingRequest> splitSessionIdInBody(SplittableRandom r) {
        HeaderMap.Builder map = HeaderMap.newBuilder();
        put(map, ":path", SPARK_RPC_PATHS.get(r.nextInt(SPARK_RPC_PATHS.size())), r);
        put(map, "content-type", "application/grpc", r);
        if (r.nextInt(3) == 0) {
            put(map, RouteHeaders.UPSTREAM, pick(r), r);
        }
        List<ProcessingRequest> out = new ArrayList<>();
        out.add(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder().setHeaders(map)).build());
        byte[] whole = sparkBody(new UUID(r.nextLong(), r.nextLong()).toString().getBytes(StandardCharsets.UTF_8),
                r.nextInt(200));
        int at = 0;
        while (at < whole.length) {
            int piece = Math.min(whole.length - at, 1 + r.nextInt(20));
            boolean last = at + piece == whole.length;
            out.add(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
                    .setBody(ByteString.copyFrom(whole, at, piece)).setEndOfStream(last && r.nextBoolean())).build());
            at += piece;
            if (r.nextInt(6) == 0) {
                out.add(unexpectedPhase(r));
            }
        }
        return out;
    }

    /** A gRPC length-prefixed message (flag, 4-byte big-endian length) starting with field 1, the session id. */
    private static byte[] sparkBody(byte[] id, int rest) {
        byte[] framed = new byte[7 + id.length + rest];
        int messageLength = framed.length - 5;
        framed[1] = (byte) (messageLength >>> 24);
        framed[2] = (byte) (messageLength >>> 16);
        framed[3] = (byte) (messageLength >>> 8);
        framed[4] = (byte) messageLength;
        framed[5] = 0x0a;
        framed[6] = (byte) id.length;
        System.arraycopy(id, 0, framed, 7, id.length);
        return framed;
    }

    private static ProcessingRequest body(SplittableRandom r) {
        byte[] bytes = new byte[r.nextInt(r.nextInt(10) == 0 ? 5000 : 64)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) r.nextInt(256);
        }
        if (r.nextInt(4) == 0) {
            // What Spark's client sends: a gRPC frame header, then field 1 (session_id, tag 0x0A) with a
            // well-formed id, sometimes cut short so that the id is spread over body messages or never ends.
            byte[] framed = sparkBody(sessionValue(r).getBytes(StandardCharsets.UTF_8), r.nextInt(20));
            bytes = java.util.Arrays.copyOf(framed, r.nextInt(3) == 0 ? r.nextInt(framed.length) : framed.length);
        } else if (bytes.length > 7 && r.nextBoolean()) {
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
