package io.scrouter.extproc.client;

import io.scrouter.extproc.Main;
import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The operator's {@code check} command against a real router: it prints the route, and the same each time. */
class CheckCommandTest {

    @Test
    void checkPrintsThePinnedRouteOfASessionOverRealGrpc() throws Exception {
        try (RouterServer rs = RouterServer.start(ConfigLoader.parse("""
                server: {bindAddress: 127.0.0.1, port: 0}
                pool: {static: [{id: a, grpc: "127.0.0.1:26001"}, {id: b, grpc: "127.0.0.1:26002"}]}
                """, Map.of()))) {
            StringWriter buffer = new StringWriter();
            String session = UUID.randomUUID().toString();
            int exit = check(buffer, "--target", "127.0.0.1:" + rs.port(), "--session", session, "--times", "3");
            assertThat(exit).isZero();
            String[] lines = buffer.toString().strip().split("\n");
            assertThat(lines).hasSize(3);
            assertThat(lines[0]).matches("session " + session + " ExecutePlan -> routed to 127\\.0\\.0\\.1:2600[12]");
            assertThat(lines[1]).isEqualTo(lines[0]);
            assertThat(lines[2]).isEqualTo(lines[0]);

            buffer.getBuffer().setLength(0);
            int rejected = check(buffer, "--target", "127.0.0.1:" + rs.port(), "--session", "nope");
            assertThat(rejected).isEqualTo(1);
            assertThat(buffer.toString()).contains("rejected INVALID_ARGUMENT", "UUID");
        }
    }

    @Test
    void checkWithoutARouterSaysWhereItLookedAndExitsOne() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        StringWriter err = new StringWriter();
        int exit = Main.commandLine(Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(err, true))
                .execute("check", "--target", "127.0.0.1:" + port);
        assertThat(exit).isEqualTo(1);
        assertThat(err.toString()).contains("no answer from the router at 127.0.0.1:" + port, "UNAVAILABLE",
                "--target").doesNotContain("\tat ");
    }

    private static int check(StringWriter out, String... args) {
        String[] command = new String[args.length + 1];
        command[0] = "check";
        System.arraycopy(args, 0, command, 1, args.length);
        return Main.commandLine(Map.of(), new PrintWriter(out, true), new PrintWriter(new StringWriter()))
                .execute(command);
    }
}
