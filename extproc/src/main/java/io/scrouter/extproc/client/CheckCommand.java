package io.scrouter.extproc.client;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.extproc.cli.Converters.HostPort;
import io.scrouter.extproc.cli.Converters.HostPortValue;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.extproc.envoy.RouteHeaders;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
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
    public Integer call() throws Exception {
        if (times < 1 || times > 1000) {
            throw new ParameterException(spec.commandLine(), "--times must be from 1 to 1000, not " + times);
        }
        String sessionId = session != null ? session : UUID.randomUUID().toString();
        ManagedChannel channel = NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext().build();
        try {
            ExtProcClient router = new ExtProcClient(channel, ANSWER_WITHIN);
            int rejected = 0;
            for (int i = 0; i < times; i++) {
                ProcessingResponse answer = router.sendEndOfStream(ExtProcClient.sparkCall(method, sessionId));
                out.println("session " + sessionId + " " + method + " -> " + describe(answer));
                rejected += answer.hasImmediateResponse() ? 1 : 0;
            }
            return rejected == 0 ? 0 : 1;
        } catch (ExecutionException | TimeoutException e) {
            Status status = e instanceof TimeoutException
                    ? Status.DEADLINE_EXCEEDED.withDescription("no answer within " + ANSWER_WITHIN.toSeconds() + " s")
                    : Status.fromThrowable(e.getCause());
            spec.commandLine().getErr().println("scrouter check: no answer from the router at " + target + ": "
                    + status.getCode() + (status.getDescription() == null ? "" : " (" + status.getDescription() + ")")
                    + ". Is it running, and is --target its ext_proc port (server.port)?");
            return 1;
        } finally {
            channel.shutdownNow();
        }
    }

    /** Far above any decision deadline: a router that answers at all answers within it. */
    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(6);

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
