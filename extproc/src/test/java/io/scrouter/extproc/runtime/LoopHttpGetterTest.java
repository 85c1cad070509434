package io.scrouter.extproc.runtime;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.scrouter.extproc.testing.Patience;
import io.scrouter.scorer.probe.HttpGetter.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The load probes' GETs on the router's event loops, against a real HTTP server on loopback (the JDK's, as a
 * driver's Jetty stand-in): whole answers, chunked or not, with the path and query as given; and each way a GET
 * fails (no answer, no listener, an answer too long, a URL that is not http) named in the error.
 */
class LoopHttpGetterTest {

    private static final String LOOP_THREADS = "test-loop";

    private HttpServer server;
    private MultiThreadIoEventLoopGroup loops;
    private ExecutorService completions;
    private final AtomicReference<String> lastRequest = new AtomicReference<>();
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", this::handle);
        server.start();
        loops = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(LOOP_THREADS, true),
                NioIoHandler.newFactory());
        completions = Executors.newSingleThreadExecutor(DaemonThreads.named("test-completions"));
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.stop(0);
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        completions.shutdownNow();
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getRawPath();
        lastRequest.set(ex.getRequestMethod() + " " + ex.getRequestURI() + " host=" + ex.getRequestHeaders()
                .getFirst("Host"));
        switch (path) {
            case "/prefix/api/v1/applications" -> respond(ex, 200, "[{\"id\":\"app-1\"}]".getBytes(), false);
            case "/chunked" -> respond(ex, 200, bytes(200_000), true);
            case "/big" -> respond(ex, 200, bytes(20_000), false);
            case "/missing" -> respond(ex, 404, "no such thing".getBytes(), false);
            case "/hang" -> {
                try {
                    release.await(1, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ex.close();
            }
            default -> respond(ex, 500, new byte[0], false);
        }
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) 'x');
        return b;
    }

    private static void respond(HttpExchange ex, int status, byte[] body, boolean chunked) throws IOException {
        ex.sendResponseHeaders(status, chunked ? 0 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            if (chunked) {
                for (int i = 0; i < body.length; i += 1000) {
                    out.write(body, i, Math.min(1000, body.length - i));
                    out.flush();
                }
            } else {
                out.write(body);
            }
        }
    }

    private String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private Reply get(LoopHttpGetter getter, String url, Duration timeout) throws Exception {
        return getter.get(URI.create(url), timeout).get(Patience.of(timeout).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void answersWithStatusAndBodyForThePathAndQueryGivenAndNamesTheHost() throws Exception {
        LoopHttpGetter getter = new LoopHttpGetter(loops, completions);
        Reply reply = get(getter, base() + "/prefix/api/v1/applications?status=active", Duration.ofSeconds(1));

        assertThat(reply.status()).isEqualTo(200);
        assertThat(new String(reply.body(), StandardCharsets.UTF_8)).isEqualTo("[{\"id\":\"app-1\"}]");
        assertThat(lastRequest.get()).isEqualTo("GET /prefix/api/v1/applications?status=active host=127.0.0.1:"
                + server.getAddress().getPort());

        Reply missing = get(getter, base() + "/missing", Duration.ofSeconds(1));
        assertThat(missing.status()).isEqualTo(404);
        assertThat(new String(missing.body(), StandardCharsets.UTF_8)).isEqualTo("no such thing");
    }

    @Test
    void chunkedAnswerArrivesWhole() throws Exception {
        Reply reply = get(new LoopHttpGetter(loops, completions), base() + "/chunked", Duration.ofSeconds(1));
        assertThat(reply.body()).isEqualTo(bytes(200_000));
    }

    @Test
    void answerIsHandedOverOffTheEventLoops() throws Exception {
        // A probe parses what it got where the answer is handed over; that must never be a loop, which Envoy's
        // requests are waiting on.
        String thread = new LoopHttpGetter(loops, completions).get(URI.create(base() + "/missing"),
                Duration.ofSeconds(1)).thenApply(r -> Thread.currentThread().getName())
                .get(Patience.of(Duration.ofSeconds(1)).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(thread).startsWith("test-completions").doesNotStartWith(LOOP_THREADS);
    }

    @Test
    void serverThatNeverAnswersFailsTheGetAfterItsTimeout() {
        Duration timeout = Duration.ofMillis(300);
        long start = System.nanoTime();
        assertThatThrownBy(() -> get(new LoopHttpGetter(loops, completions), base() + "/hang", timeout))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(IOException.class)
                .hasMessageContaining("/hang was not answered within 300 ms");
        // Not before its timeout: the deadline is the one configured.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(timeout);
    }

    @Test
    void nothingListeningFailsTheGetNamingTheAddress() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String url = "http://127.0.0.1:" + port + "/api/v1/applications";
        assertThatThrownBy(() -> get(new LoopHttpGetter(loops, completions), url, Duration.ofSeconds(1)))
                .cause().isInstanceOf(IOException.class)
                .hasMessageContaining("cannot connect to 127.0.0.1");
    }

    @Test
    void answerLongerThanTheLimitFailsTheGetSayingSo() {
        assertThatThrownBy(() -> get(new LoopHttpGetter(loops, completions, 10_000), base() + "/big",
                Duration.ofSeconds(1)))
                .cause().isInstanceOf(IOException.class)
                .hasMessageContaining("/big: the answer is longer than 10000 bytes");
    }

    @Test
    void urlThatIsNotHttpIsRefusedWithWhatAMetricsUrlMustLookLike() {
        assertThatThrownBy(() -> get(new LoopHttpGetter(loops, completions), "ftp://127.0.0.1/x",
                Duration.ofSeconds(1)))
                .cause().isInstanceOf(IOException.class)
                .hasMessageContaining("must be http://host:port or https://host:port");
    }

    @Test
    void unknownHostFailsTheGetWithoutTouchingTheLoops() {
        // `.invalid` never resolves (RFC 2606); the lookup runs on the completions executor, not on a loop.
        assertThatThrownBy(() -> get(new LoopHttpGetter(loops, completions), "http://no-such-driver.invalid:4040/",
                Duration.ofSeconds(1)))
                .cause().isInstanceOf(IOException.class)
                .hasMessageContaining("no-such-driver.invalid");
    }
}
