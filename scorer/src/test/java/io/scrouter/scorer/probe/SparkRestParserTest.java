package io.scrouter.scorer.probe;

import io.scrouter.scorer.LoadSample;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;

import static io.scrouter.scorer.probe.SparkSamples.json;
import static io.scrouter.scorer.probe.SparkSamples.load;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Parsing of real Spark 4.2.0 responses (see {@code spark-4.2.0/README.md}); expected numbers come from
 * the capture's own summary ({@code series-liveupdate0-summary.txt}), read independently of this parser.
 */
class SparkRestParserTest {

    @Test
    void idleExecutorsHaveTwoSlotsAndNoRunningTask() throws IOException {
        assertThat(SparkRestParser.executorSlots(load("executors-idle.json"))).containsExactly(0, 2);
    }

    @Test
    void runningExecutorsHaveBothSlotsBusy() throws IOException {
        assertThat(SparkRestParser.executorSlots(load("executors-running.json"))).containsExactly(2, 2);
    }

    @Test
    void activeStageDuringTheJobLeavesTenTasksWaiting() throws IOException {
        // 16 tasks - 2 running - 4 completed indices
        assertThat(SparkRestParser.pendingTasks(load("stages-active-running.json"))).isEqualTo(10);
    }

    @ParameterizedTest(name = "t={0}s: active={1} pending={2} maxTasks={3}")
    @CsvSource({
            "1,  2, 14, 2",
            "5,  2, 10, 2",
            "10, 2,  6, 2",
            "19, 0,  0, 2", // the job had ended: the active stage list is empty
    })
    void liveUpdateZeroSeriesGivesTheCapturedCounts(int t, long active, long pending, long maxTasks)
            throws IOException {
        LoadSample sample = SparkRestParser.sample(
                load("series-liveupdate0-t" + t + "-exec.json"),
                load("series-liveupdate0-t" + t + "-stages.json"));

        assertThat(sample).isEqualTo(new LoadSample(active, pending, maxTasks));
    }

    @Test
    void firstSecondOfTheJobReadsAsEightTimesOverloaded() throws IOException {
        LoadSample t1 = SparkRestParser.sample(
                load("series-liveupdate0-t1-exec.json"), load("series-liveupdate0-t1-stages.json"));
        // (2 + 14) / 2
        assertThat(t1.utilisation()).isEqualTo(8.0);
    }

    @Test
    void applicationIdIsTheFirstListedApplication() throws IOException {
        // No /applications response was captured; SparkSamples.APPLICATIONS is a minimal hand-written one.
        assertThat(SparkRestParser.applicationId(SparkSamples.APPLICATIONS)).isEqualTo(SparkSamples.APP_ID);
        assertThat(SparkRestParser.applicationId(json("[{\"id\":\"app-1\"},{\"id\":\"app-2\"}]")))
                .isEqualTo("app-1");
    }

    @Test
    void clusterModeSumsOnlyActiveExecutors() throws IOException {
        // Hand-written in the shape of the captured file: on a cluster the driver entry has no slots,
        // and a lost executor stays listed with isActive=false; its numbers must not count.
        byte[] executors = json("""
                [ {"id":"driver","isActive":true,"maxTasks":0,"activeTasks":0},
                  {"id":"1","isActive":true,"maxTasks":4,"activeTasks":3},
                  {"id":"2","isActive":true,"maxTasks":4,"activeTasks":1},
                  {"id":"3","isActive":false,"maxTasks":4,"activeTasks":4} ]
                """);
        assertThat(SparkRestParser.executorSlots(executors)).containsExactly(4, 8);
    }

    @Test
    void pendingCountsIndicesNotAttemptsAndSumsOverStages() throws IOException {
        // Stage 1: 10 tasks, 2 running, 5 distinct indices done (9 attempts completed because of retries
        // and speculation) -> 3 waiting. Stage 2: 4 tasks, 1 running, 0 done -> 3 waiting.
        byte[] stages = json("""
                [ {"status":"ACTIVE","stageId":1,"numTasks":10,"numActiveTasks":2,
                   "numCompleteTasks":9,"numCompletedIndices":5},
                  {"status":"ACTIVE","stageId":2,"numTasks":4,"numActiveTasks":1,
                   "numCompleteTasks":0,"numCompletedIndices":0} ]
                """);
        assertThat(SparkRestParser.pendingTasks(stages)).isEqualTo(6);
    }

    @Test
    void stagesNotActiveAreIgnored() throws IOException {
        byte[] stages = json("""
                [ {"status":"PENDING","numTasks":100,"numActiveTasks":0,"numCompletedIndices":0},
                  {"status":"ACTIVE","numTasks":5,"numActiveTasks":1,"numCompletedIndices":1} ]
                """);
        assertThat(SparkRestParser.pendingTasks(stages)).isEqualTo(3);
    }

    @Test
    void stageWithMoreRunningAndDoneThanTasksCountsNoWaitingTask() throws IOException {
        // Speculative copies can make running + done exceed numTasks; that must not subtract from others.
        byte[] stages = json("""
                [ {"status":"ACTIVE","numTasks":4,"numActiveTasks":3,"numCompletedIndices":3},
                  {"status":"ACTIVE","numTasks":4,"numActiveTasks":0,"numCompletedIndices":0} ]
                """);
        assertThat(SparkRestParser.pendingTasks(stages)).isEqualTo(4);
    }

    @Test
    void executorsThatAreNotAnArrayAreRejectedNamingTheEndpoint() {
        assertThatThrownBy(() -> SparkRestParser.executorSlots(json("{\"id\":\"driver\",\"maxTasks\":2}")))
                .isInstanceOf(IOException.class)
                .hasMessage("Spark REST /executors did not return a JSON array");
    }

    @Test
    void stagesThatAreNotAnArrayAreRejectedNamingTheEndpoint() {
        assertThatThrownBy(() -> SparkRestParser.pendingTasks(json("\"no stages\"")))
                .isInstanceOf(IOException.class)
                .hasMessage("Spark REST /stages?status=active did not return a JSON array");
    }

    @Test
    void activeExecutorWithoutMaxTasksIsRejectedNamingTheField() {
        byte[] executors = json("[ {\"id\":\"driver\",\"isActive\":true,\"activeTasks\":1} ]");
        assertThatThrownBy(() -> SparkRestParser.executorSlots(executors))
                .isInstanceOf(IOException.class)
                .hasMessage("Spark REST entry lacks numeric field 'maxTasks'");
    }

    @Test
    void nonNumericActiveTasksIsRejectedNamingTheField() {
        byte[] executors = json("[ {\"id\":\"driver\",\"isActive\":true,\"maxTasks\":2,\"activeTasks\":\"2\"} ]");
        assertThatThrownBy(() -> SparkRestParser.executorSlots(executors))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("'activeTasks'");
    }

    @Test
    void stageWithoutCompletedIndicesIsRejectedNamingTheField() {
        byte[] stages = json("[ {\"status\":\"ACTIVE\",\"numTasks\":4,\"numActiveTasks\":1} ]");
        assertThatThrownBy(() -> SparkRestParser.pendingTasks(stages))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("'numCompletedIndices'");
    }

    @Test
    void emptyApplicationListIsRejected() {
        assertThatThrownBy(() -> SparkRestParser.applicationId(json("[ ]")))
                .isInstanceOf(IOException.class)
                .hasMessage("Spark REST /applications listed no application");
    }

    @Test
    void applicationsThatAreNotAnArrayAreRejected() {
        assertThatThrownBy(() -> SparkRestParser.applicationId(json("{\"id\":\"app-1\"}")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("/applications");
    }

    @Test
    void applicationWithoutIdIsRejectedNamingTheField() {
        assertThatThrownBy(() -> SparkRestParser.applicationId(json("[ {\"name\":\"Spark Connect server\"} ]")))
                .isInstanceOf(IOException.class)
                .hasMessage("Spark REST entry lacks text field 'id'");
    }

    @Test
    void bodyThatIsNotJsonIsAnIOException() {
        // A proxy's HTML error page, for instance.
        assertThatThrownBy(() -> SparkRestParser.executorSlots(json("<html>502 Bad Gateway</html>")))
                .isInstanceOf(IOException.class);
    }

    @Test
    void emptyBodyIsRejectedAsNotAnArray() {
        assertThatThrownBy(() -> SparkRestParser.executorSlots(new byte[0]))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("/executors");
    }
}
