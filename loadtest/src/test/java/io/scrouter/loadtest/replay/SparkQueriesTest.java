package io.scrouter.loadtest.replay;

import io.scrouter.loadtest.trace.TraceEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SparkQueriesTest {

    private static final String ID = "3f1c2a9e-5b7d-4c1e-8f00-0123456789ab";

    @Test
    void oneOneRowPartitionPerTaskSleepingTheScaledTaskTime() {
        TraceEvent.Query q = new TraceEvent.Query(0, ID, 8, 300, List.of("ExecutePlan"));

        assertThat(SparkQueries.approximating(q, 10)).isEqualTo(
                "SELECT id, reflect('java.lang.Thread', 'sleep', CAST(30 AS BIGINT)) FROM range(0, 8, 1, 8)");
    }

    @Test
    void connectionStringCarriesTheSessionIdAndOptionallyTheRoutingHeader() {
        assertThat(SparkQueries.remote("sc://127.0.0.1:8080", ID, true))
                .isEqualTo("sc://127.0.0.1:8080/;session_id=" + ID + ";x-spark-session-id=" + ID);
        assertThat(SparkQueries.remote("sc://gateway:8080/;token=x", ID, false))
                .isEqualTo("sc://gateway:8080/;session_id=" + ID);
        assertThatThrownBy(() -> SparkQueries.remote("http://gateway", ID, true)).hasMessageContaining("--remote");
    }
}
