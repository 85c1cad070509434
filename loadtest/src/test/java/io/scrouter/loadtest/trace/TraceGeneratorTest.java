package io.scrouter.loadtest.trace;

import io.scrouter.extproc.routing.SessionIds;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class TraceGeneratorTest {

    @Test
    void sameScenarioAndSeedGiveTheSameTraceAndAnotherSeedDoesNot() {
        Scenario burst = Scenarios.byName("burst");
        List<TraceEvent> a = new TraceGenerator(burst, 7).generate();
        List<TraceEvent> b = new TraceGenerator(burst, 7).generate();
        List<TraceEvent> c = new TraceGenerator(burst, 8).generate();

        assertThat(a).isEqualTo(b);
        assertThat(a).isNotEqualTo(c);
    }

    @Test
    void traceIsSortedSessionsAreValidIdsAndEachStartsBeforeItsQueriesAndEnds() {
        List<TraceEvent> trace = new TraceGenerator(Scenarios.byName("multi-router"), 3).generate();
        Set<String> open = new HashSet<>();
        Set<Integer> routers = new HashSet<>();
        long last = 0;
        for (TraceEvent e : trace) {
            assertThat(e.atMillis()).isGreaterThanOrEqualTo(last);
            last = e.atMillis();
            assertThat(SessionIds.isValid(e.session())).isTrue();
            if (e instanceof TraceEvent.SessionStart s) {
                assertThat(open.add(s.session())).isTrue();
                routers.add(s.router());
            } else if (e instanceof TraceEvent.Query) {
                assertThat(open).contains(e.session());
            } else {
                assertThat(open.remove(e.session())).isTrue();
            }
        }
        assertThat(open).isEmpty();
        assertThat(routers).containsExactlyInAnyOrder(0, 1, 2, 3);
    }

    @Test
    void theBurstReallyStartsInsideOnePollInterval() {
        Scenario s = Scenarios.byName("burst");
        Scenario.Burst burst = s.traffic().burst();
        long inWindow = new TraceGenerator(s, 1).generate().stream()
                .filter(e -> e instanceof TraceEvent.SessionStart)
                .filter(e -> e.atMillis() >= burst.atMillis() && e.atMillis() < burst.atMillis() + burst.withinMillis())
                .count();
        assertThat(burst.withinMillis()).isLessThan(s.cluster().pollMillis());
        assertThat(inWindow).isGreaterThanOrEqualTo(burst.sessions());
    }
}
