package io.scrouter.scorer.probe;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.scrouter.scorer.LoadSample;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;

import static io.scrouter.scorer.probe.SparkSamples.load;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The probe against a local HTTP server that answers like a Spark driver, with the captured Spark 4.2.0
 * responses as bodies. {@code future.get(5, SECONDS)} only bounds a broken test; no test asserts a duration.
 */
class SparkRestProbeTest {

    private static final Duration GENEROUS = Duration.ofSeconds(5);

    private final Queue<String> requests = new ConcurrentLinkedQueue<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private ExecutorService serverThreads;
    private ExecutorService clientThreads;
    private HttpServer server;
    private HttpClient http;

    // What the fake driver serves; changed by tests between probes.
    private volatile String appId = SparkSamples.APP_ID;
    private volatile byte[] applications = SparkSamples.APPLICATIONS;
    private volatile byte[] executors = load("series-liveupdate0-t1-exec.json");
    private volatile byte[] stages = load("series-liveupdate0-t1-stages.json");
    private volatile int forcedStatus = 0;
    private volatile boolean hang = false;
    private volatile String pathPrefix = "";

    @BeforeEach
    void startServer() throws IOException {
        serverThreads = Executors.newCachedThreadPool();
        clientThreads = Executors.newCachedThreadPool();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(serverThreads);
        server.createContext("/", this::handle);
        server.start();
        http = HttpClient.newBuilder().executor(clientThreads).build();
    }

    @AfterEach
    void stopServer() {
        release.countDown(); // lets a hanging handler finish so the server can stop
        server.stop(0);
        serverThreads.shutdownNow();
        clientThreads.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String query = exchange.getRequestURI().getRawQuery();
        requests.add(query == null ? path : path + "?" + query);
        try (exchange) {
            if (hang) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                respond(exchange, 503, new byte[0]);
                return;
            }
            if (forcedStatus != 0) {
                respond(exchange, forcedStatus, "boom".getBytes());
                return;
            }
            String api = pathPrefix + "/api/v1/applications";
            String app = api + "/" + appId;
            if (path.equals(api)) {
                respond(exchange, 200, applications);
            } else if (path.equals(app + "/executors")) {
                respond(exchange, 200, executors);
            } else if (path.equals(app + "/stages") && "status=active".equals(query)) {
                respond(exchange, 200, stages);
            } else {
                // Spark answers 404 for an application id it does not know.
                respond(exchange, 404, "no such app".getBytes());
            }
        }
    }

    private static void respond(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private SparkRestProbe probe(Duration timeout) {
        return new SparkRestProbe(http, baseUrl(), timeout);
    }

    /** The exception the probe's future completed with, unwrapped from the ExecutionException. */
    private static Throwable failureOf(CompletableFuture<LoadSample> future) {
        ExecutionException e = catchThrowableOfType(ExecutionException.class, () -> future.get(5, SECONDS));
        assertThat(e).as("the probe should have failed").isNotNull();
        return e.getCause();
    }

    @Test
    void sampleReadsActivePendingAndSlotsFromTheDriver() throws Exception {
        LoadSample sample = probe(GENEROUS).sample().get(5, SECONDS);

        assertThat(sample).isEqualTo(new LoadSample(2, 14, 2));
        assertThat(requests).containsExactlyInAnyOrder(
                "/api/v1/applications",
                "/api/v1/applications/" + SparkSamples.APP_ID + "/executors",
                "/api/v1/applications/" + SparkSamples.APP_ID + "/stages?status=active");
    }

    @Test
    void applicationIdIsLookedUpOnceAndReused() throws Exception {
        SparkRestProbe probe = probe(GENEROUS);
        assertThat(probe.sample().get(5, SECONDS)).isEqualTo(new LoadSample(2, 14, 2));

        executors = load("series-liveupdate0-t19-exec.json");
        stages = load("series-liveupdate0-t19-stages.json");
        assertThat(probe.sample().get(5, SECONDS)).isEqualTo(new LoadSample(0, 0, 2));

        assertThat(requests.stream().filter(r -> r.equals("/api/v1/applications"))).hasSize(1);
        assertThat(requests).hasSize(5);
    }

    @Test
    void metricsUrlWithAPathPrefixIsHonoured() throws Exception {
        // A driver UI behind a reverse proxy; with or without the trailing slash.
        pathPrefix = "/proxy/driver-1";
        assertThat(new SparkRestProbe(http, baseUrl() + "/proxy/driver-1", GENEROUS).sample().get(5, SECONDS))
                .isEqualTo(new LoadSample(2, 14, 2));
        assertThat(new SparkRestProbe(http, baseUrl() + "/proxy/driver-1/", GENEROUS).sample().get(5, SECONDS))
                .isEqualTo(new LoadSample(2, 14, 2));
    }

    @RepeatedTest(10)
    void driverThatNeverAnswersFailsTheProbeWithATimeout() {
        hang = true;

        CompletableFuture<LoadSample> future = probe(Duration.ofMillis(300)).sample();

        // Regression: the per-request HTTP timeout used to equal the probe's deadline, so a hang surfaced at
        // random as HttpTimeoutException (an IOException) and was reported as an I/O error, not a timeout.
        assertThat(failureOf(future)).isInstanceOf(TimeoutException.class);
    }

    @Test
    void serverErrorFailsTheProbeNamingTheStatus() {
        forcedStatus = 500;

        Throwable cause = failureOf(probe(GENEROUS).sample());

        assertThat(cause).isInstanceOf(IOException.class)
                .hasMessageContaining("HTTP 500")
                .hasMessageContaining("/api/v1/applications");
    }

    @Test
    void serverErrorOnTheLoadEndpointsAlsoFailsTheProbe() throws Exception {
        SparkRestProbe probe = probe(GENEROUS);
        probe.sample().get(5, SECONDS); // learns the application id
        forcedStatus = 500;

        Throwable cause = failureOf(probe.sample());

        assertThat(cause).isInstanceOf(IOException.class).hasMessageContaining("answered HTTP 500");
    }

    @Test
    void restartedDriverIsFoundAgainAfterOneFailedProbe() throws Exception {
        SparkRestProbe probe = probe(GENEROUS);
        assertThat(probe.sample().get(5, SECONDS)).isEqualTo(new LoadSample(2, 14, 2));

        // The driver restarts: a new application id, and the old one is answered with 404.
        appId = "local-B";
        applications = SparkSamples.applications("local-B");
        executors = load("series-liveupdate0-t19-exec.json");
        stages = load("series-liveupdate0-t19-stages.json");

        Throwable cause = failureOf(probe.sample());
        assertThat(cause).isInstanceOf(IOException.class)
                .hasMessageContaining("HTTP 404")
                .hasMessageContaining(SparkSamples.APP_ID);

        assertThat(probe.sample().get(5, SECONDS)).isEqualTo(new LoadSample(0, 0, 2));
        assertThat(requests.stream().filter(r -> r.equals("/api/v1/applications"))).hasSize(2);
        assertThat(requests).contains("/api/v1/applications/local-B/executors",
                "/api/v1/applications/local-B/stages?status=active");
    }

    @Test
    void malformedBodyFailsTheProbeWithTheParserMessage() throws Exception {
        stages = "{\"error\":\"not a list\"}".getBytes();

        Throwable cause = failureOf(probe(GENEROUS).sample());

        assertThat(cause).isInstanceOf(IOException.class)
                .hasMessage("Spark REST /stages?status=active did not return a JSON array");
    }

    @Test
    void driverWithoutApplicationFailsTheProbeAndIsAskedAgainNextTime() throws Exception {
        applications = "[ ]".getBytes();
        SparkRestProbe probe = probe(GENEROUS);

        Throwable cause = failureOf(probe.sample());
        assertThat(cause).isInstanceOf(IOException.class).hasMessageContaining("listed no application");

        // The application appears (the driver finished starting): the next probe succeeds.
        applications = SparkSamples.APPLICATIONS;
        assertThat(probe.sample().get(5, SECONDS)).isEqualTo(new LoadSample(2, 14, 2));
        assertThat(requests.stream().filter(r -> r.equals("/api/v1/applications"))).hasSize(2);
    }

    @Test
    void unreachableDriverFailsTheProbe() throws Exception {
        int port = server.getAddress().getPort();
        server.stop(0); // nothing listens there any more

        CompletableFuture<LoadSample> future =
                new SparkRestProbe(http, "http://127.0.0.1:" + port, GENEROUS).sample();

        assertThat(failureOf(future)).isInstanceOf(IOException.class);
    }
}
