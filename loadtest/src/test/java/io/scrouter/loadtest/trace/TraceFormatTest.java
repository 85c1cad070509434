package io.scrouter.loadtest.trace;

import org.junit.jupiter.api.Test;

import java.io.StringReader;
import java.io.StringWriter;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TraceFormatTest {

    private static final String S = "3f1c2a9e-5b7d-4c1e-8f00-0123456789ab";

    @Test
    void everyEventKindSurvivesAWriteReadRoundTrip() {
        List<TraceEvent> events = List.of(
                new TraceEvent.SessionStart(0, S, 2),
                new TraceEvent.Query(850, S, 8, 300, List.of("Config", "AnalyzePlan", "ExecutePlan")),
                new TraceEvent.SessionEnd(9_120, S));
        StringWriter out = new StringWriter();
        TraceFormat.write(events, out);

        assertThat(out.toString()).startsWith("{\"t\":0,\"ev\":\"start\",\"session\":\"" + S + "\",\"router\":2}\n");
        assertThat(TraceFormat.read(new StringReader(out.toString()))).isEqualTo(events);
    }

    @Test
    void aLineMissingAFieldIsRejectedNamingTheField() {
        assertThatThrownBy(() -> TraceFormat.parse("{\"t\":5,\"ev\":\"query\",\"session\":\"" + S + "\",\"tasks\":2,\"rpcs\":[]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lacks \"taskMs\"");
    }

    @Test
    void queryTimeAloneCountsWavesOfSlots() {
        TraceEvent.Query q = new TraceEvent.Query(0, S, 17, 100, List.of("ExecutePlan"));
        assertThat(q.aloneMillis(8)).isEqualTo(300);   // 8 + 8 + 1 tasks: three waves
        assertThat(q.aloneMillis(32)).isEqualTo(100);
    }
}
