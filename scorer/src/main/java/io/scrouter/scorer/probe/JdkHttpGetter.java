package io.scrouter.scorer.probe;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** {@link HttpGetter} on the JDK's HTTP client, for tools and tests that have no event loop of their own. */
public final class JdkHttpGetter implements HttpGetter {

    private final HttpClient http;

    /** @param http shared client (one per process is enough; it pools connections) */
    public JdkHttpGetter(HttpClient http) {
        this.http = http;
    }

    @Override
    public CompletableFuture<Reply> get(URI uri, Duration timeout) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
                .thenApply(response -> new Reply(response.statusCode(), response.body()));
    }
}
