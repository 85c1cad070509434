package io.scrouter.extproc.publisher;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.scrouter.scorer.probe.SparkRestParser;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A Spark Connect server is ready when both its gRPC port completes an HTTP/2 handshake (the channel
 * reaches READY) and its monitoring REST API lists the application. Before that, the router must not send
 * it new sessions: the seed's lesson of never sending traffic to a node that cannot serve yet.
 */
public final class SparkReadiness implements ReadinessCheck, AutoCloseable {

    private final ManagedChannel channel;
    private final HttpClient http;
    private final URI applications;
    private final Duration timeout;
    private volatile String applicationId;

    public SparkReadiness(String grpcAddress, String metricsUrl, Duration timeout) {
        int colon = grpcAddress.lastIndexOf(':');
        String host = grpcAddress.substring(0, colon).replace("[", "").replace("]", "");
        int port = Integer.parseInt(grpcAddress.substring(colon + 1));
        this.channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
        String base = metricsUrl.endsWith("/") ? metricsUrl : metricsUrl + "/";
        this.applications = URI.create(base).resolve("api/v1/applications");
        this.timeout = timeout;
    }

    @Override
    public CompletableFuture<String> notReadyReason() {
        return grpcReady().thenCompose(grpcProblem -> grpcProblem != null
                ? CompletableFuture.completedFuture(grpcProblem) : restReady());
    }

    private CompletableFuture<String> grpcReady() {
        CompletableFuture<String> result = new CompletableFuture<>();
        ConnectivityState state = channel.getState(true);
        if (state == ConnectivityState.READY) {
            result.complete(null);
            return result;
        }
        watch(state, result);
        return result.completeOnTimeout("gRPC port does not accept HTTP/2 connections yet (" + state + ")",
                timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void watch(ConnectivityState from, CompletableFuture<String> result) {
        channel.notifyWhenStateChanged(from, () -> {
            ConnectivityState now = channel.getState(true);
            if (now == ConnectivityState.READY) {
                result.complete(null);
            } else if (!result.isDone()) {
                watch(now, result);
            }
        });
    }

    private CompletableFuture<String> restReady() {
        HttpRequest request = HttpRequest.newBuilder(applications).timeout(timeout).GET().build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).handle((response, error) -> {
            if (error != null) {
                return "monitoring REST API unreachable: " + error.getClass().getSimpleName();
            }
            if (response.statusCode() != 200) {
                return "monitoring REST API answered HTTP " + response.statusCode();
            }
            try {
                applicationId = SparkRestParser.applicationId(response.body());
                return null;
            } catch (Exception e) {
                return "monitoring REST API lists no application yet";
            }
        });
    }

    @Override
    public String instance() {
        return applicationId;
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
