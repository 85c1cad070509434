package io.scrouter.loadtest.scenario;

import io.scrouter.extproc.config.RouterConfig;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Teams, replica groups and the routers' groups section in scenario files. */
class TeamScenarioTest {

    @Test
    void twoTeamsReadsEachTeamsClientsOverTheSharedOnesAndTheGroupsAsTheRouterDoes() {
        ScenarioSpec spec = ScenarioFiles.load("two-teams");

        assertThat(spec.teams()).extracting(ScenarioSpec.Team::name).containsExactly("team-a", "team-b");
        ScenarioSpec.Clients a = spec.teams().get(0).clients();
        ScenarioSpec.Clients b = spec.teams().get(1).clients();
        // Each team's own keys...
        assertThat(a.bursts()).containsExactly(new ScenarioSpec.Burst(15 * 60_000, 16, 60_000, 1.0));
        assertThat(b.bursts()).isEmpty();
        assertThat(a.lifetime().medianMillis()).isEqualTo(12 * 60_000);
        assertThat(b.think().medianMillis()).isEqualTo(10_000);
        assertThat(b.tasks()).extracting(ScenarioSpec.TaskWeight::tasks).containsExactly(1, 4, 8);
        // ...over what the file's clients say for both.
        assertThat(b.lifetime()).isEqualTo(spec.clients().lifetime());
        assertThat(a.firstQueryAfterMillis()).isEqualTo(3_000).isEqualTo(b.firstQueryAfterMillis());

        assertThat(spec.cluster().replicaGroups()).containsExactly("team-a", "team-a", "team-b", "team-b");
        assertThat(spec.cluster().groupOf(3)).isEqualTo("team-b");
        assertThat(spec.cluster().groupOf(4)).as("a replica that joins later").isEqualTo("default");
        assertThat(spec.cluster().groups()).contains(new RouterConfig.Groups(
                Map.of("team-a", List.of("team-a"), "team-b", List.of("team-b")), Optional.empty(), Map.of()));
    }

    @Test
    void theSharedVariantHasFallbackOrderAndCaps() {
        RouterConfig.Groups g = ScenarioFiles.load("two-teams-shared").cluster().groups().orElseThrow();
        assertThat(g.allow().get("team-a")).containsExactly("team-a", "shared");
        assertThat(g.allow().get("team-b")).containsExactly("team-b", "shared");
        assertThat(g.maxSessionsPerReplica()).isEqualTo(Map.of("team-a", 8L, "team-b", 8L));
    }

    @Test
    void withoutGroupsKeepsEverythingButTheGroupsSection() {
        ScenarioSpec spec = ScenarioFiles.load("two-teams-shared");
        ScenarioSpec free = spec.withoutGroups();
        assertThat(free.cluster().groups()).isEmpty();
        assertThat(free.teams()).isEqualTo(spec.teams());
        assertThat(free.cluster().replicaGroups()).isEqualTo(spec.cluster().replicaGroups());
        assertThat(ScenarioFiles.parse(ScenarioFiles.toYaml(spec), List.of("cluster.groups=")))
                .as("the same as removing the section from the file").isEqualTo(free);
    }

    @Test
    void aScenarioWithoutTeamsHasNone() {
        ScenarioSpec steady = ScenarioFiles.load("steady");
        assertThat(steady.teams()).isEmpty();
        assertThat(steady.cluster().replicaGroups()).isEmpty();
        assertThat(steady.cluster().groups()).isEmpty();
    }

    @Test
    void mistakesNameTheScenarioKeyAndSayWhatToDo() {
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams", List.of("cluster.groups.allow={team-a: [team-a]}")))
                .isInstanceOf(ScenarioException.class)
                .hasMessageContaining("'teams.team-b' is not a request group under cluster.groups.allow [team-a]")
                .hasMessageContaining("add it there");
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams", List.of("cluster.replicaGroups=[team-a, team-b]")))
                .hasMessageContaining("'cluster.replicaGroups' names 2 groups for 4 replicas");
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams", List.of("cluster.replicaGroups=[a, b, c, 'd e']")))
                .hasMessageContaining("'cluster.replicaGroups' group names must be 1-64 characters");
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams", List.of("teams.team-a.thinks=5s")))
                .hasMessageContaining("'teams.team-a.thinks' is not a known key");
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams", List.of("teams.team-b=[1, 2]")))
                .hasMessageContaining("'teams.team-b' must be a mapping");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("cluster.groups={allow: {x: [y]}}")))
                .hasMessageContaining("'cluster.groups' needs teams")
                .hasMessageContaining("withoutGroup");
    }

    @Test
    void theRoutersOwnChecksOfTheGroupsSectionApplyUnderTheScenarioKey() {
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams",
                List.of("cluster.groups.allow={team-a: [], team-b: [team-b]}")))
                .isInstanceOf(ScenarioException.class)
                .hasMessageStartingWith("scenario key 'cluster.groups.allow.team-a' lists no replica group");
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams",
                List.of("cluster.groups.maxSessionsPerReplica={nobody: 3}")))
                .hasMessageStartingWith("scenario key 'cluster.groups.maxSessionsPerReplica.nobody' caps replica "
                        + "group 'nobody'");
        assertThatThrownBy(() -> ScenarioFiles.load("two-teams", List.of("cluster.groups.allowed={}")))
                .hasMessageStartingWith("scenario key 'cluster.groups.allowed'");
    }
}
