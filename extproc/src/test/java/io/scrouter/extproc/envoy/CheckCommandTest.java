package io.scrouter.extproc.envoy;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.config.ConfigLoader;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            String session = UUID.randomUUID().toString();
            int exit = CheckCommand.run(new String[] {"--target", "127.0.0.1:" + rs.port(), "--session", session,
                    "--times", "3"}, new PrintStream(buffer, true, StandardCharsets.UTF_8));
            assertThat(exit).isZero();
            String[] lines = buffer.toString(StandardCharsets.UTF_8).strip().split("\n");
            assertThat(lines).hasSize(3);
            assertThat(lines[0]).matches("session " + session + " ExecutePlan -> routed to 127\\.0\\.0\\.1:2600[12]");
            assertThat(lines[1]).isEqualTo(lines[0]);
            assertThat(lines[2]).isEqualTo(lines[0]);

            buffer.reset();
            int rejected = CheckCommand.run(new String[] {"--target", "127.0.0.1:" + rs.port(), "--session", "nope"},
                    new PrintStream(buffer, true, StandardCharsets.UTF_8));
            assertThat(rejected).isEqualTo(1);
            assertThat(buffer.toString(StandardCharsets.UTF_8)).contains("rejected INVALID_ARGUMENT", "UUID");
        }
    }
}
