package io.scrouter.loadtest.profile;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class ProfileFiguresTest {

    @Test
    void threadNamesGroupWithoutTheirCounters() {
        assertThat(ThreadTimes.group("redisson-netty-1-3")).isEqualTo("redisson-netty");
        assertThat(ThreadTimes.group("GC Thread#1")).isEqualTo("GC Thread");
        assertThat(ThreadTimes.group("grpc-nio-worker")).isEqualTo("grpc-nio-worker");
        assertThat(ThreadTimes.group("C2 CompilerThre")).isEqualTo("C2 CompilerThre");
        assertThat(ThreadTimes.group("1234")).isEqualTo("1234");
    }

    @Test
    void librariesAreTakenFromPackages() {
        assertThat(JfrDigest.library("org.redisson.command.RedisExecutor")).isEqualTo("Redisson");
        assertThat(JfrDigest.library("io.scrouter.extproc.routing.SessionRouter")).isEqualTo("router (io.scrouter)");
        assertThat(JfrDigest.library("java.util.HashMap")).isNull();
        assertThat(JfrDigest.library("org.example.Thing")).isEqualTo("other");
        assertThat(JfrDigest.simple("io.scrouter.extproc.envoy.ProcessStream$$Lambda$412/0x0000000800d3c000"))
                .isEqualTo("ProcessStream$$Lambda");
        assertThat(JfrDigest.simple("io.scrouter.extproc.envoy.ProcessStream$$Lambda$679+0x00007fd8f94c5630.2028427430"))
                .isEqualTo("ProcessStream$$Lambda");
    }

    @Test
    void frameWidthsAreProportionalToSamples() {
        String svg = FlameGraph.svg("t", Map.of("g;a;b", 3L, "g;a;c", 1L), frame -> "Redisson");
        double all = width(svg, "all ");
        assertThat(width(svg, "b ")).isCloseTo(all * 0.75, within(0.2));
        assertThat(width(svg, "c ")).isCloseTo(all * 0.25, within(0.2));
        assertThat(width(svg, "a ")).isCloseTo(all, within(0.2));
        assertThat(svg).contains("4 samples").contains("rgb(225,90,75)");
    }

    private static double width(String svg, String framePrefix) {
        Matcher m = Pattern.compile("<title>" + Pattern.quote(framePrefix) + "[^<]*</title><rect x=\"[^\"]+\" y=\"[^\"]+\" "
                + "width=\"([0-9.]+)\"").matcher(svg);
        assertThat(m.find()).as("frame %s in the SVG", framePrefix).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
