package io.scrouter.extproc.ops;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.scrouter.extproc.ops.OpsHttpServer.Answer;
import io.scrouter.extproc.testing.Patience;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The operator endpoints' HTTP server, spoken to over a raw socket so that every byte on the wire is the test's:
 * answers in the order asked on one connection (refusals included), HEAD without a body, a request too long, a
 * page that fails, and a port already taken.
 */
class OpsHttpServerTest {

    private MultiThreadIoEventLoopGroup loops;
    private OpsHttpServer server;
    private final CountDownLatch slowMayAnswer = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        loops = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        server = OpsHttpServer.start(loops, "127.0.0.1", 0, "test-ops", request -> switch (request.path()) {
            case "/slow" -> {
                slowMayAnswer.await(1, TimeUnit.MINUTES);
                yield Answer.of(200, "text/plain", "slow\n");
            }
            case "/fails" -> throw new IllegalStateException("no pool yet");
            default -> Answer.of(200, "text/plain", "page " + request.path() + " query " + request.query() + "\n");
        });
    }

    @AfterEach
    void stop() {
        slowMayAnswer.countDown();
        server.close();
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** Sends {@code raw} and reads until the server closes the connection or {@code expectedAnswers} have come. */
    private String exchange(String raw, int expectedAnswers) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
            socket.setSoTimeout((int) Patience.of(Duration.ofSeconds(1)).toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            slowMayAnswer.countDown();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            int n;
            while (count(got.toString(StandardCharsets.ISO_8859_1), "HTTP/1.1 ") < expectedAnswers
                    || !got.toString(StandardCharsets.ISO_8859_1).endsWith("\n")) {
                n = in.read(buf);
                if (n < 0) {
                    break;
                }
                got.write(buf, 0, n);
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    private static int count(String s, String part) {
        int c = 0;
        for (int i = s.indexOf(part); i >= 0; i = s.indexOf(part, i + 1)) {
            c++;
        }
        return c;
    }

    @Test
    void answersOnOneConnectionComeInTheOrderAskedRefusalsIncluded() throws IOException {
        // The slow page is held until every request is on the wire; the refusal of the POST that follows must
        // still come after it.
        String got = exchange("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /pool HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
                + "GET /pool?verbose=1 HTTP/1.1\r\nHost: x\r\n\r\n", 3);
        int slow = got.indexOf("slow\n");
        int refused = got.indexOf("HTTP/1.1 405");
        int pool = got.indexOf("page /pool query verbose=1");
        assertThat(slow).isPositive();
        assertThat(refused).isGreaterThan(slow);
        assertThat(pool).isGreaterThan(refused);
        assertThat(got).contains("Allow: GET, HEAD").contains("only GET and HEAD are answered here, not POST");
    }

    @Test
    void headGetsTheHeadersAndLengthButNoBody() throws IOException {
        String got = exchange("HEAD /pool HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1);
        assertThat(got).startsWith("HTTP/1.1 200 OK").contains("content-length: " + "page /pool query null\n".length())
                .doesNotContain("page /pool");
    }

    @Test
    void requestLongerThanTheLimitIsRefusedWith413() throws IOException {
        String body = "x".repeat(OpsHttpServer.MAX_REQUEST_BYTES + 1);
        String got = exchange("GET /pool HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length() + "\r\n\r\n"
                + body, 1);
        assertThat(got).startsWith("HTTP/1.1 413").contains("these endpoints take no body");
    }

    @Test
    void pageThatFailsAnswers500NamingWhy() throws IOException {
        String got = exchange("GET /fails HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1);
        assertThat(got).startsWith("HTTP/1.1 500").contains("no pool yet");
    }

    @Test
    void portAlreadyTakenFailsTheStartSayingWhatToDo() {
        assertThatThrownBy(() -> OpsHttpServer.start(loops, "127.0.0.1", server.port(), "test-ops-2",
                request -> Answer.of(200, "text/plain", "")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot listen on /127.0.0.1:" + server.port() + " for test-ops-2")
                .hasMessageContaining("choose a free port, or -1 to turn the endpoint off");
    }
}
