package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.trace.TraceEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TraceFileTest {

    private static final List<TraceEvent> TRACE = List.of(
            new TraceEvent.SessionStart(0, "a", 0),
            new TraceEvent.SessionStart(5, "b", 0),
            new TraceEvent.Query(10, "a", 2, 100, List.of("ExecutePlan")),
            new TraceEvent.Query(12, "b", 2, 100, List.of("ExecutePlan")),
            new TraceEvent.SessionEnd(20, "a"));

    @Test
    void freshIdsAreUuidsAndKeepEachSessionsEventsTogether() {
        List<TraceEvent> fresh = TraceFile.withFreshSessionIds(TRACE);

        assertThat(fresh.get(0).session()).matches("[0-9a-f-]{36}").isNotEqualTo(fresh.get(1).session());
        assertThat(fresh.get(2).session()).isEqualTo(fresh.get(0).session());
        assertThat(fresh.get(4).session()).isEqualTo(fresh.get(0).session());
        assertThat(fresh).extracting(TraceEvent::atMillis).containsExactly(0L, 5L, 10L, 12L, 20L);
    }

    @Test
    void firstSessionsKeepsOnlyTheEarliestSessionsEvents() {
        assertThat(TraceFile.firstSessions(TRACE, 1)).extracting(TraceEvent::session).containsOnly("a").hasSize(3);
    }
}
