package io.scrouter.loadtest;

import io.scrouter.loadtest.cli.CommandText;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GroupIsolationTest {

    @Test
    void writesEachTeamWithAndWithoutGroupsUnderTheCommandThatMadeIt(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("two-teams.md");
        String command = CommandText.of(List.of("groups", "--scenario", "two-teams", "--seeds", "1,2",
                "--set", "teams.team-a.think.median=30s"));
        String md = GroupIsolation.run(new GroupIsolation.Settings("two-teams", List.of("teams.team-a.think.median=30s"),
                "predicted", List.of(1L, 2L), 2, out, command));

        assertThat(Files.readString(out)).isEqualTo(md);
        assertThat(md).contains("loadtest/bin/loadtest groups --scenario two-teams --seeds 1,2 --set "
                + "teams.team-a.think.median=30s\n");
        assertThat(md).contains("seeds [1, 2]");
        assertThat(md.lines().filter(l -> l.matches("\\| team-[ab] \\| (no groups|groups) \\|.*"))).hasSize(4);
        assertThat(md).contains("| team-b | groups |").contains("| team-b 100% |");
        assertThat(md.lines().filter(l -> l.matches("\\| team-[ab] \\| [0-9.]+× \\(.*"))).hasSize(2);
    }

    @Test
    void aScenarioWithoutTeamsOrGroupsIsRefusedWithWhereToLook() {
        assertThatThrownBy(() -> GroupIsolation.run(new GroupIsolation.Settings("steady", List.of(), "predicted",
                List.of(1L), 1, null, null)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs teams and cluster.groups")
                .hasMessageContaining("two-teams.yaml");
    }
}
