package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.extproc.routing.SessionIds;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class WorkloadTest {

    @Test
    void sameScenarioAndSeedGiveTheSameArrivalsAndAnotherSeedDoesNot() {
        ScenarioSpec spec = ScenarioFiles.load("burst-5s-large");
        assertThat(new Workload(spec, 7).arrivals()).isEqualTo(new Workload(spec, 7).arrivals());
        assertThat(new Workload(spec, 7).arrivals()).isNotEqualTo(new Workload(spec, 8).arrivals());
    }

    @Test
    void aSessionsDrawsDoNotDependOnWhenTheyAreMade() {
        // Closed-loop timing differs between policies; the users and their queries must not.
        Workload w = new Workload(ScenarioFiles.load("interactive"), 3);
        SessionPlan a = w.session(5);
        SessionPlan b = w.session(5);
        w.session(6).nextQuery(); // another session's draws in between change nothing
        assertThat(a.id()).isEqualTo(b.id());
        assertThat(a.intensity()).isEqualTo(b.intensity());
        a.firstQueryDelayMillis();
        b.firstQueryDelayMillis();
        for (int i = 0; i < 50; i++) {
            assertThat(a.nextQuery()).isEqualTo(b.nextQuery());
            assertThat(a.nextThinkMillis()).isEqualTo(b.nextThinkMillis());
        }
    }

    @Test
    void everySessionOfAScenarioWithTeamsBelongsToOneAndATeamKeepsItsSessionsWhenAnotherChanges() {
        ScenarioSpec spec = ScenarioFiles.load("two-teams");
        ScenarioSpec biggerBurst = ScenarioFiles.load("two-teams",
                List.of("teams.team-a.bursts=[{at: 15m, sessions: 40, over: 1m, heavyShare: 1}]"));
        Workload w = new Workload(spec, 3);
        Workload other = new Workload(biggerBurst, 3);

        assertThat(teamSessions(w, "team-a")).hasSizeGreaterThanOrEqualTo(4 + 16);
        assertThat(teamSessions(w, "team-b")).hasSize(12);
        assertThat(teamSessions(w, "team-a").size() + teamSessions(w, "team-b").size()).isEqualTo(w.arrivals().size());
        assertThat(teamSessions(other, "team-a")).hasSize(teamSessions(w, "team-a").size() + 24);
        // team-b's users are the same people asking the same queries, however team-a changes.
        assertThat(teamSessions(other, "team-b")).isEqualTo(teamSessions(w, "team-b"));
        // A team's clients are its own: team-b never sends team-a's 128-task queries.
        assertThat(w.session(teamIndex(w, "team-b")).nextQuery().tasks()).isIn(1, 4, 8);
        assertThat(w.session(0).team()).isNotNull();
        assertThat(new Workload(ScenarioFiles.load("steady"), 3).session(0).team()).isNull();
    }

    /** Each session of {@code team} in arrival order: its start, id and first five queries. */
    private static List<String> teamSessions(Workload w, String team) {
        List<String> out = new java.util.ArrayList<>();
        for (Workload.Arrival a : w.arrivals()) {
            SessionPlan p = w.session(a.index());
            if (team.equals(p.team())) {
                StringBuilder sb = new StringBuilder(a.atMillis() + " " + p.id());
                for (int i = 0; i < 5; i++) {
                    sb.append(' ').append(p.nextQuery());
                }
                out.add(sb.toString());
            }
        }
        return out;
    }

    private static int teamIndex(Workload w, String team) {
        return w.arrivals().stream().mapToInt(Workload.Arrival::index).filter(i -> team.equals(w.session(i).team()))
                .findFirst().orElseThrow();
    }

    @Test
    void burstsStartInsideTheirWindow() {
        ScenarioSpec spec = ScenarioFiles.load("burst-0.5s-large");
        long inWindow = new Workload(spec, 1).arrivals().stream()
                .filter(a -> a.atMillis() >= 20 * 60_000 && a.atMillis() < 20 * 60_000 + 500).count();
        assertThat(inWindow).isGreaterThanOrEqualTo(64);
    }

    @Test
    void aCrowdWithItsOwnHeavyShareHasNoHeavyUserWhileTheSteadyArrivalsDo() {
        ScenarioSpec spec = ScenarioFiles.load("idle-notebooks");
        Workload w = new Workload(spec, 2);
        long crowdHeavy = 0;
        long laterHeavy = 0;
        long later = 0;
        for (Workload.Arrival a : w.arrivals()) {
            // The crowd of notebooks opens in the first 25 min, before any steady arrival (from 30 min).
            if (a.atMillis() < 30 * 60_000) {
                crowdHeavy += w.session(a.index()).heavy() ? 1 : 0;
            } else {
                later++;
                laterHeavy += w.session(a.index()).heavy() ? 1 : 0;
            }
        }
        assertThat(crowdHeavy).isZero();
        assertThat(later).isGreaterThan(50);
        assertThat((double) laterHeavy / later).isBetween(0.03, 0.25); // 12% of about 100 arrivals
    }

    @Test
    void theSteadyStatePopulationArrivesDuringTheWarmUp() {
        ScenarioSpec spec = ScenarioFiles.load("steady");
        Workload w = new Workload(spec, 1);
        long early = w.arrivals().stream().filter(a -> a.atMillis() < spec.warmupMillis()).count();
        // rate 0.04/s × mean lifetime (20 min × e^(0.8²/2) ≈ 1,650 s) ≈ 66, plus Poisson arrivals over 10 min.
        assertThat(w.initialSessions()).isBetween(60L, 72L);
        assertThat(early).isGreaterThan(w.initialSessions());
    }

    @Test
    void intensityIsParetoScaledToMeanOneAndCapped() {
        ScenarioSpec.Intensity in = new ScenarioSpec.Intensity(2.0, 1_000);
        double sum = 0;
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            sum += SessionPlan.intensity(in, (i + 0.5) / n);
        }
        assertThat(sum / n).isCloseTo(1.0, within(0.02));
        assertThat(SessionPlan.intensity(new ScenarioSpec.Intensity(1.3, 30), 0.999_999)).isEqualTo(30.0);
        assertThat(SessionPlan.intensity(new ScenarioSpec.Intensity(0, 30), 0.9)).isEqualTo(1.0);
    }

    @Test
    void theDayCycleIsQuietAtNightAndPeaksMidRun() {
        ScenarioSpec spec = ScenarioFiles.load("day");
        Workload w = new Workload(spec, 1);
        double peak = spec.clients().sessionsPerSecond();
        assertThat(w.rateAt(0)).isCloseTo(0.25 * peak, within(1e-12));
        assertThat(w.rateAt(spec.durationMillis() / 2.0)).isCloseTo(peak, within(1e-12));
    }

    @Test
    void theRenderedTraceIsSortedWithValidIdsAndEachSessionStartsBeforeItsQueriesAndEnds() {
        List<TraceEvent> trace = TraceRenderer.render(new Workload(ScenarioFiles.load("routers-4"), 3));
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
}
