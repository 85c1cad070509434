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
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.scrouter.extproc.cli.Converters.HostPort;
import io.scrouter.extproc.cli.Converters.HostPortValue;
import io.scrouter.extproc.cli.ManifestVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code check}: asks a running router where one Spark Connect request would go, exactly as Envoy asks it (one
 * {@code Process} stream, request headers in {@code raw_value}), and prints the answer. Repeating with the same
 * {@code --session} shows the session pinned; a new UUID shows a placement. Exits 0 when every answer was a
 * route, 1 when the router rejected a request or could not be reached.
 */
@Command(name = "check", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        description = "Ask a running router where a Spark Connect request would go, as Envoy asks it.")
public final class CheckCommand implements Callable<Integer> {

    @Option(names = "--target", paramLabel = "HOST:PORT", converter = HostPortValue.class,
            defaultValue = "127.0.0.1:" + RouteHeaders.DEFAULT_EXTPROC_PORT,
            description = "The router's ext_proc address (default: ${DEFAULT-VALUE}).")
    HostPort target;

    @Option(names = "--session", paramLabel = "UUID",
            description = "Session id to ask about (default: a new random UUID, which shows a placement).")
    String session;

    @Option(names = "--method", paramLabel = "NAME", defaultValue = "ExecutePlan",
            description = "SparkConnectService method of the request (default: ${DEFAULT-VALUE}).")
    String method;

    @Option(names = "--times", paramLabel = "N", defaultValue = "1",
            description = "Ask N times with the same session, 1 to 1000 (default: ${DEFAULT-VALUE}).")
    int times;

    @Spec
    CommandSpec spec;

    private final PrintWriter out;

    public CheckCommand(PrintWriter out) {
        this.out = out;
    }

    @Override
    public Integer call() {
        if (times < 1 || times > 1000) {
            throw new ParameterException(spec.commandLine(), "--times must be from 1 to 1000, not " + times);
        }
        String sessionId = session != null ? session : UUID.randomUUID().toString();
        ManagedChannel channel = NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext().build();
        try {
            ExternalProcessorGrpc.ExternalProcessorStub stub = ExternalProcessorGrpc.newStub(channel);
            int rejected = 0;
            for (int i = 0; i < times; i++) {
                ProcessingResponse answer = ask(stub, sessionId, method);
                out.println("session " + sessionId + " " + method + " -> " + describe(answer));
                rejected += answer.hasImmediateResponse() ? 1 : 0;
            }
            return rejected == 0 ? 0 : 1;
        } catch (StatusRuntimeException e) {
            spec.commandLine().getErr().println("scrouter check: no answer from the router at " + target + ": "
                    + e.getStatus().getCode() + (e.getStatus().getDescription() == null ? ""
                    : " (" + e.getStatus().getDescription() + ")")
                    + ". Is it running, and is --target its ext_proc port (server.port)?");
            return 1;
        } finally {
            channel.shutdownNow();
        }
    }

    private static ProcessingResponse ask(ExternalProcessorGrpc.ExternalProcessorStub stub, String session,
                                          String method) {
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
                        answer.completeExceptionally(Status.fromThrowable(t).asRuntimeException());
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(Status.INTERNAL.withDescription("the router closed the "
                                + "stream without answering").asRuntimeException());
                    }
                });
        stream.onNext(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder()
                .setHeaders(headers).setEndOfStream(true)).build());
        try {
            return answer.get(6, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof StatusRuntimeException s ? s
                    : Status.INTERNAL.withDescription(e.getCause().toString()).asRuntimeException();
        } catch (TimeoutException e) {
            throw Status.DEADLINE_EXCEEDED.withDescription("no answer within 6s").asRuntimeException();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
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
