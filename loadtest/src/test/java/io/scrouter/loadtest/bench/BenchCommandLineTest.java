package io.scrouter.loadtest.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BenchCommandLineTest {

    @Test
    void defaultsAreTheIssuesLoads() {
        BenchCommandLine.Bench b = BenchCommandLine.bench(new String[0]);
        assertThat(b.inFlight()).isEqualTo(32);
        assertThat(b.newInFlight()).isEqualTo(4);
        assertThat(b.rounds()).isEqualTo(3);
        assertThat(b.warmupSeconds()).isEqualTo(b.seconds());
        assertThat(b.known()).isEqualTo(2000);
        assertThat(b.loads()).containsExactly(SessionMix.KNOWN, SessionMix.MIX, SessionMix.NEW);
        assertThat(b.routers()).containsExactly(1, 2);
        assertThat(b.out()).isEqualTo(Path.of("loadtest/results/bench.md"));
    }

    @Test
    void takesBothOptionForms() {
        BenchCommandLine.Bench b = BenchCommandLine.bench(new String[] {"--in-flight=8", "--loads", "new", "--routers", "2"});
        assertThat(b.inFlight()).isEqualTo(8);
        assertThat(b.loads()).isEqualTo(List.of(SessionMix.NEW));
        assertThat(b.routers()).isEqualTo(List.of(2));
    }

    @Test
    void unknownOptionIsNamedWithTheUsage() {
        assertThatThrownBy(() -> BenchCommandLine.bench(new String[] {"--inflight", "8"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option --inflight").hasMessageContaining("usage:");
    }

    @Test
    void badValuesSayWhatIsAllowed() {
        assertThatThrownBy(() -> BenchCommandLine.bench(new String[] {"--routers", "3"}))
                .hasMessageContaining("--routers takes 1 and/or 2").hasMessageContaining("'3'");
        assertThatThrownBy(() -> BenchCommandLine.bench(new String[] {"--loads", "known,old"}))
                .hasMessageContaining("'old'");
        assertThatThrownBy(() -> BenchCommandLine.bench(new String[] {"--seconds", "0"}))
                .hasMessageContaining("--seconds must be between 1 and 600, got 0");
        assertThatThrownBy(() -> BenchCommandLine.bench(new String[] {"--rounds", "three"}))
                .hasMessageContaining("--rounds must be a whole number, got 'three'");
        assertThatThrownBy(() -> BenchCommandLine.heap(new String[] {"--sessions"}))
                .hasMessageContaining("--sessions needs a value");
    }

    @Test
    void theReportedCommandCanBePastedIntoAShell() {
        assertThat(BenchCommandLine.commandLine("loadtest/bin/loadtest bench",
                new String[] {"--note", "other work's builds", "--seconds", "5"}))
                .isEqualTo("loadtest/bin/loadtest bench --note 'other work'\\''s builds' --seconds 5");
    }
}
