package io.scrouter.scorer.probe;

import io.scrouter.scorer.LoadProbe;
import io.scrouter.scorer.LoadSample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
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

    private final HttpGetter http;
    private final URI base;
    private final Duration timeout;
    private volatile String applicationId;

    /**
     * @param http       how to fetch (the router's own network threads; the JDK's client in tools)
     * @param metricsUrl the driver UI's base URL, such as {@code http://10.0.0.5:4040}
     * @param timeout    deadline for the whole probe
     */
    public SparkRestProbe(HttpGetter http, String metricsUrl, Duration timeout) {
        this.http = http;
        this.base = URI.create(metricsUrl.endsWith("/") ? metricsUrl : metricsUrl + "/");
        this.timeout = timeout;
    }

    /** A probe on the JDK's HTTP client ({@code http} shared: one per process is enough; it pools connections). */
    public SparkRestProbe(HttpClient http, String metricsUrl, Duration timeout) {
        this(new JdkHttpGetter(http), metricsUrl, timeout);
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
        URI uri = base.resolve(path);
        return http.get(uri, timeout.multipliedBy(2)).thenApply(reply -> {
            if (reply.status() == 404) {
                applicationId = null;
            }
            if (reply.status() != 200) {
                throw new CompletionException(new IOException("GET " + uri + " answered HTTP " + reply.status()));
            }
            return reply.body();
        });
    }
}
