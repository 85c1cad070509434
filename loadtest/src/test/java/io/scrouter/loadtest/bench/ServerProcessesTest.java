package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@code bench} says when a server it starts never serves: a real JVM and a real redis-server. */
class ServerProcessesTest {

    @Test
    void aServerJvmThatRefusesAnOptionIsReportedAsExitedWithItsStatus(@TempDir Path dir) {
        // The JVM's launcher ends with status 1 on an option it does not know, at once, without serving.
        assertThatThrownBy(() -> ServerProcesses.start(dir, Cores.detect(), List.of(Target.NOOP), 1,
                List.of("-XX:+NoSuchOptionInAnyJvm"), new Progress()).close())
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("noop-0 exited with status 1 before reporting SERVING; its log: ")
                .hasMessageEndingWith(dir.resolve("noop-0.log").toString());
    }

    @Test
    void aServerStillRunningIsReportedAsNotServingInTime() {
        assertThat(ServerProcesses.notServing("router_redis-0", -1, Path.of("/tmp/r.log")).getMessage())
                .isEqualTo("router_redis-0 did not report SERVING within 120 s; its log: /tmp/r.log");
    }
}
