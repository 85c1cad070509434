package io.scrouter.loadtest.scenario;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScenarioFilesTest {

    @Test
    void everyBuiltInScenarioLoadsAndSurvivesARoundTripThroughYaml() {
        List<String> names = ScenarioFiles.builtIn();
        assertThat(names).contains("steady", "burst-0.5s-large", "interactive", "mixed-sizes", "demo");
        for (String name : names) {
            ScenarioSpec spec = ScenarioFiles.load(name);
            assertThat(spec.name()).as("file name and name key agree").isEqualTo(name);
            assertThat(ScenarioFiles.parse(ScenarioFiles.toYaml(spec), List.of())).as(name).isEqualTo(spec);
        }
    }

    @Test
    void extendsMergesMappingsKeyByKeyAndReplacesLists() {
        ScenarioSpec steady = ScenarioFiles.load("steady");
        ScenarioSpec routers = ScenarioFiles.load("routers-4");

        // routers-4 extends burst-0.5s-large, which extends steady.
        assertThat(routers.cluster().routers()).isEqualTo(4);
        assertThat(routers.clients().bursts()).hasSize(6);
        assertThat(routers.clients().bursts().get(0)).isEqualTo(new ScenarioSpec.Burst(20 * 60_000, 64, 500));
        assertThat(routers.clients().think()).isEqualTo(steady.clients().think());
        assertThat(routers.cluster().replicas()).isEqualTo(steady.cluster().replicas());
    }

    @Test
    void overridesSetAnyKeyWithYamlValues() {
        ScenarioSpec spec = ScenarioFiles.load("steady", List.of("clients.loop=open", "cluster.replicas=[4, 16]",
                "clients.think.median=2s", "cluster.probeInterval=250ms", "clients.heavy.share=0.5"));

        assertThat(spec.clients().loop()).isEqualTo(ScenarioSpec.Loop.OPEN);
        assertThat(spec.cluster().replicas()).containsExactly(4, 16);
        assertThat(spec.clients().think().medianMillis()).isEqualTo(2_000);
        assertThat(spec.cluster().probeIntervalMillis()).isEqualTo(250);
        assertThat(spec.clients().heavy().share()).isEqualTo(0.5);
        assertThat(spec.referenceSlots()).isEqualTo(16);
    }

    @Test
    void aMisspeltKeyIsRejectedNamingItAndTheKnownKeys() {
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("clients.thinks.median=2s")))
                .isInstanceOf(ScenarioException.class)
                .hasMessageContaining("'clients.thinks'")
                .hasMessageContaining("think");
    }

    @Test
    void badValuesNameTheKeyAndWhatIsExpected() {
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("cluster.probeInterval=soon")))
                .hasMessageContaining("'cluster.probeInterval' must be a duration such as 500ms");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("cluster.routers=0")))
                .hasMessageContaining("'cluster.routers' must be between 1 and 64, got 0");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("clients.loop=sometimes")))
                .hasMessageContaining("'clients.loop' must be one of [closed, open]");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("clients.intensity.alpha=0.5")))
                .hasMessageContaining("'clients.intensity.alpha' must be 0");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("clients.lifetime.min=5h")))
                .hasMessageContaining("'clients.lifetime.min' must not exceed clients.lifetime.max");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("cluster.replicas=[]")))
                .hasMessageContaining("'cluster.replicas' needs at least one replica");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("cluster=3")))
                .hasMessageContaining("'cluster' must be a mapping");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("cluster.recentWindow=10s")))
                .hasMessageContaining("'cluster.recentWindow' must not be shorter than cluster.refreshEvery (30s)");
        assertThatThrownBy(() -> ScenarioFiles.load("steady",
                List.of("clients.bursts=[{at: 1m, sessions: 5, heavyShare: 2}]")))
                .hasMessageContaining("'clients.bursts[0].heavyShare' must be a number between 0.0 and 1.0, got 2.0");
    }

    @Test
    void theRecentWindowDefaultsToFourPushesOfABusySessionAndAtLeastTwoMinutes() {
        assertThat(ScenarioFiles.load("steady").cluster().recentWindowMillis()).isEqualTo(120_000);
        ScenarioSpec slow = ScenarioFiles.load("steady", List.of("cluster.refreshEvery=1m"));
        assertThat(slow.cluster().recentWindowMillis()).isEqualTo(240_000);
    }

    @Test
    void aCrowdMaySetItsOwnShareOfHeavyUsers() {
        ScenarioSpec spec = ScenarioFiles.load("idle-notebooks");
        assertThat(spec.clients().heavy().share()).isEqualTo(0.12);
        assertThat(spec.clients().bursts().get(0).heavyShare()).isEqualTo(0.0);
        assertThat(ScenarioFiles.load("burst-5s-large").clients().bursts().get(0).heavyShare()).isNaN();
    }

    @Test
    void malformedOverridesAndMissingFilesSayWhatToDo() {
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("routers")))
                .hasMessageContaining("must look like key.path=value");
        assertThatThrownBy(() -> ScenarioFiles.load("steady", List.of("name.x=1")))
                .hasMessageContaining("'name' is a value, not a mapping");
        assertThatThrownBy(() -> ScenarioFiles.load("no-such-scenario"))
                .hasMessageContaining("no scenario file")
                .hasMessageContaining("built-in scenarios: ")
                .hasMessageContaining("steady");
        assertThatThrownBy(() -> ScenarioFiles.load("../etc"))
                .hasMessageContaining("no scenario file");
    }

    @Test
    void aFileThatExtendsItselfIsRejected(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path a = dir.resolve("a.yaml");
        Path b = dir.resolve("b.yaml");
        Files.writeString(a, "name: a\nextends: " + b + "\n");
        Files.writeString(b, "name: b\nextends: " + a + "\n");
        assertThatThrownBy(() -> ScenarioFiles.load(a.toString()))
                .hasMessageContaining("extends itself");
    }

    @Test
    void invalidYamlIsReportedWithItsLine(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path f = dir.resolve("broken.yaml");
        Files.writeString(f, "name: broken\nclients: {loop: closed\n");
        assertThatThrownBy(() -> ScenarioFiles.load(f.toString()))
                .hasMessageContaining("is not valid YAML or JSON")
                .hasMessageContaining("line");
    }

    @Test
    void jsonFilesWorkToo(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path f = dir.resolve("small.json");
        Files.writeString(f, "{\"name\": \"small\", \"extends\": \"steady\", \"cluster\": {\"replicas\": [2, 2]}}");
        ScenarioSpec spec = ScenarioFiles.load(f.toString());
        assertThat(spec.cluster().replicas()).containsExactly(2, 2);
        assertThat(spec.clients().think()).isEqualTo(ScenarioFiles.load("steady").clients().think());
    }

    @Test
    void durationsReadAndWriteInTheirShortestExactForm() {
        assertThat(DurationText.parseMillis("250ms")).isEqualTo(250);
        assertThat(DurationText.parseMillis("1.5s")).isEqualTo(1_500);
        assertThat(DurationText.parseMillis("30m")).isEqualTo(1_800_000);
        assertThat(DurationText.parseMillis("2h")).isEqualTo(7_200_000);
        assertThat(DurationText.parseMillis("2 days")).isEqualTo(-1);
        assertThat(DurationText.format(1_800_000)).isEqualTo("30m");
        assertThat(DurationText.format(90_000)).isEqualTo("90s");
        assertThat(DurationText.format(1_500)).isEqualTo("1.5s");
        assertThat(DurationText.format(250)).isEqualTo("250ms");
    }
}
