package io.scrouter.testkit.redis;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The hang the fault tests inject is real: once {@link RedisProcess#pause()} returns, the process is stopped and a
 * command sent to it waits unanswered; after {@link RedisProcess#resume()} Redis runs it. Routers rely on the
 * second half: a call that timed out while Redis hung may still run when it resumes, and their write-backs
 * overwrite what it did.
 */
class RedisProcessPauseTest {

    /** How long the test watches a paused Redis for an answer that must not come. Longer only proves more. */
    private static final int WATCH_MILLIS = 300;
    /** Bound on waiting for the answer after the resume: a loopback PING, with room for a busy machine. */
    private static final int ANSWER_BOUND_MILLIS = 30_000;

    @Test
    void aPausedRedisIsStoppedAndAnswersOnlyAfterItResumes() throws Exception {
        assumeTrue(RedisProcess.installed(), "redis-server is not installed: .ci/run installs it");
        try (RedisProcess redis = RedisProcess.start();
             Socket socket = new Socket(InetAddress.getLoopbackAddress(), redis.port())) {
            InputStream in = socket.getInputStream();
            socket.setSoTimeout(ANSWER_BOUND_MILLIS);
            socket.getOutputStream().write(Resp.encode("PING"));
            assertThat(Resp.read(in)).isEqualTo("PONG");

            redis.pause();
            assertThat(processState(redis.pid())).as("state of the paused redis-server").isEqualTo('T');
            socket.getOutputStream().write(Resp.encode("ECHO", "sent while paused"));
            socket.setSoTimeout(WATCH_MILLIS);
            assertThatThrownBy(() -> Resp.read(in)).as("an answer from a paused Redis")
                    .isInstanceOf(SocketTimeoutException.class);

            redis.resume();
            socket.setSoTimeout(ANSWER_BOUND_MILLIS);
            assertThat(Resp.read(in)).as("the command sent while paused, run after the resume")
                    .isEqualTo("sent while paused");
        }
    }

    /** The state letter of {@code /proc/<pid>/stat} (R running, S sleeping, T stopped). */
    private static char processState(long pid) throws Exception {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        assumeTrue(Files.exists(stat), "no /proc on this system: the process state cannot be read");
        String line = Files.readString(stat);
        return line.charAt(line.lastIndexOf(')') + 2);
    }
}
