package io.scrouter.testkit.redis;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RespTest {

    private static Object parse(String wire) throws IOException {
        return Resp.read(new ByteArrayInputStream(wire.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void parsesTheRepliesSentinelAndRedisSend() throws IOException {
        assertThat(parse("+PONG\r\n")).isEqualTo("PONG");
        assertThat(parse(":42\r\n")).isEqualTo(42L);
        assertThat(parse("$-1\r\n")).isNull();
        assertThat(parse("*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n")).isEqualTo(List.of("127.0.0.1", "6380"));
        assertThat(parse("*2\r\n*1\r\n:1\r\n$0\r\n\r\n")).isEqualTo(List.of(List.of(1L), ""));
    }

    @Test
    void errorRepliesAreThrownAndCommandsAreLengthPrefixed() {
        assertThatThrownBy(() -> parse("-NOGOODSLAVE No suitable replica\r\n")).hasMessageContaining("NOGOODSLAVE");
        assertThat(new String(Resp.encode("GET", "ké"), StandardCharsets.UTF_8))
                .isEqualTo("*2\r\n$3\r\nGET\r\n$3\r\nké\r\n");
    }
}
