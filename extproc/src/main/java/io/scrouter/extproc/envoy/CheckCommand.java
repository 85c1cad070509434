package io.scrouter.extproc.envoy;

import com.google.protobuf.ByteString;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code check} subcommand: asks a running router where one Spark Connect request would go, exactly as
 * Envoy asks it (one {@code Process} stream, request headers in {@code raw_value}), and prints the answer.
 *
 * <pre>
 * java -jar extproc-all.jar check [--target 127.0.0.1:9002] [--session UUID] [--method ExecutePlan] [--times N]
 * </pre>
 * Repeating with the same {@code --session} shows the session pinned; a new UUID shows a placement.
 */
public final class CheckCommand {

    private CheckCommand() {
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        String target = "127.0.0.1:" + RouteHeaders.DEFAULT_EXTPROC_PORT;
        String session = UUID.randomUUID().toString();
        String method = "ExecutePlan";
        int times = 1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--target" -> target = args[i + 1];
                case "--session" -> session = args[i + 1];
                case "--method" -> method = args[i + 1];
                case "--times" -> times = Math.max(1, Math.min(1000, Integer.parseInt(args[i + 1])));
                default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'; usage: check "
                        + "[--target host:port] [--session UUID] [--method Name] [--times N]");
            }
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("option '" + args[args.length - 1] + "' needs a value");
        }
        int colon = target.lastIndexOf(':');
        ManagedChannel channel = NettyChannelBuilder.forAddress(target.substring(0, colon),
                Integer.parseInt(target.substring(colon + 1))).usePlaintext().build();
        try {
            ExternalProcessorGrpc.ExternalProcessorStub stub = ExternalProcessorGrpc.newStub(channel);
            int failures = 0;
            for (int i = 0; i < times; i++) {
                ProcessingResponse answer = ask(stub, session, method);
                out.println("session " + session + " " + method + " -> " + describe(answer));
                failures += answer.hasImmediateResponse() ? 1 : 0;
            }
            return failures == 0 ? 0 : 1;
        } finally {
            channel.shutdownNow();
        }
    }

    private static ProcessingResponse ask(ExternalProcessorGrpc.ExternalProcessorStub stub, String session,
                                          String method) throws Exception {
        HeaderMap.Builder headers = HeaderMap.newBuilder();
        put(headers, ":method", "POST");
        put(headers, ":path", "/spark.connect.SparkConnectService/" + method);
        put(headers, "content-type", "application/grpc");
        put(headers, RouteHeaders.SESSION_ID, session);
        CompletableFuture<ProcessingResponse> answer = new CompletableFuture<>();
        StreamObserver<ProcessingRequest> stream = stub.withDeadlineAfter(5, TimeUnit.SECONDS).process(
                new StreamObserver<>() {
                    @Override
                    public void onNext(ProcessingResponse value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new IllegalStateException("the router closed the stream "
                                + "without answering"));
                    }
                });
        stream.onNext(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder()
                .setHeaders(headers).setEndOfStream(true)).build());
        try {
            return answer.get(6, TimeUnit.SECONDS);
        } finally {
            stream.onCompleted();
        }
    }

    private static void put(HeaderMap.Builder headers, String key, String value) {
        headers.addHeaders(HeaderValue.newBuilder().setKey(key)
                .setRawValue(ByteString.copyFrom(value, StandardCharsets.UTF_8)));
    }

    static String describe(ProcessingResponse r) {
        if (r.hasImmediateResponse()) {
            return "rejected " + Status.Code.values()[r.getImmediateResponse().getGrpcStatus().getStatus()] + ": "
                    + r.getImmediateResponse().getBody().toStringUtf8();
        }
        for (var option : r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
            if (option.getHeader().getKey().equals(RouteHeaders.UPSTREAM)) {
                return "routed to " + option.getHeader().getRawValue().toString(StandardCharsets.US_ASCII);
            }
        }
        return "answered without a route: " + r;
    }
}
