package io.scrouter.scorer.probe;

import io.scrouter.scorer.LoadProbe;
import io.scrouter.scorer.LoadSample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Probes one Spark driver's monitoring REST API without blocking.
 *
 * <p>The application id is looked up once and remembered; a 404 afterwards (the driver restarted with a
 * new application) clears it so the next probe looks again. Executors and active stages are fetched in
 * parallel. The whole probe, all requests included, fails after {@code timeout}: a driver that cannot
 * answer in about a second is treated as unfit for new sessions, not as idle.
 */
public final class SparkRestProbe implements LoadProbe {

    private final HttpClient http;
    private final URI base;
    private final Duration timeout;
    private volatile String applicationId;

    /**
     * @param http       shared client (one per router is enough; it pools connections)
     * @param metricsUrl the driver UI's base URL, such as {@code http://10.0.0.5:4040}
     * @param timeout    deadline for the whole probe
     */
    public SparkRestProbe(HttpClient http, String metricsUrl, Duration timeout) {
        this.http = http;
        this.base = URI.create(metricsUrl.endsWith("/") ? metricsUrl : metricsUrl + "/");
        this.timeout = timeout;
    }

    @Override
    public CompletableFuture<LoadSample> sample() {
        String known = applicationId;
        CompletableFuture<String> appId = known != null
                ? CompletableFuture.completedFuture(known)
                : get("api/v1/applications").thenApply(body -> {
                    try {
                        String id = SparkRestParser.applicationId(body);
                        applicationId = id;
                        return id;
                    } catch (IOException e) {
                        throw new CompletionException(e);
                    }
                });
        return appId.thenCompose(id -> {
            CompletableFuture<byte[]> executors = get("api/v1/applications/" + id + "/executors");
            CompletableFuture<byte[]> stages = get("api/v1/applications/" + id + "/stages?status=active");
            return executors.thenCombine(stages, (e, s) -> {
                try {
                    return SparkRestParser.sample(e, s);
                } catch (IOException ex) {
                    throw new CompletionException(ex);
                }
            });
        }).orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private CompletableFuture<byte[]> get(String path) {
        // The whole probe's deadline (orTimeout above) must be the one that fires, so a hang always surfaces
        // as a TimeoutException; the per-request timeout only stops the HTTP exchange from lingering after.
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout.multipliedBy(2)).GET()
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).thenApply(response -> {
            if (response.statusCode() == 404) {
                applicationId = null;
            }
            if (response.statusCode() != 200) {
                throw new CompletionException(new IOException(
                        "GET " + request.uri() + " answered HTTP " + response.statusCode()));
            }
            return response.body();
        });
    }
}
