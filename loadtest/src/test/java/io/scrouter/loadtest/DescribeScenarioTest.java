package io.scrouter.loadtest;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.Workload;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DescribeScenarioTest {

    @Test
    void aScenarioWithTeamsDescribesWhatEachTeamOffers() {
        ScenarioSpec spec = ScenarioFiles.load("two-teams");
        String text = DescribeScenario.offered(spec, new Workload(spec, 1));

        // team-b: 12 dashboards open from the warm-up on, each living at least 45 min of a 40 min run.
        assertThat(text).contains("# team-b offers (seed 1): 12 sessions in all, 12 open at the start; "
                + "at mid-run about 12 open");
        // team-a: 4 notebooks at the start, then its crowd of 16 among the later arrivals.
        assertThat(text).containsPattern("# team-a offers \\(seed 1\\): (2\\d|3\\d) sessions in all, 4 open at the start");
        assertThat(text.lines()).allMatch(l -> l.startsWith("# ")).hasSize(8);
    }
}
