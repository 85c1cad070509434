package io.scrouter.loadtest.replay;

import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReplicaLayoutTest {

    @Test
    void printedPoolIsAValidServiceConfigurationMatchingTheEmbeddedDefaultsAddresses() {
        String printed = ReplayCommand.poolForOperator(new ReplicaLayout(2, 15002, 4040), 8);

        RouterConfig config = ConfigLoader.parse(printed, Map.of());

        assertThat(config.pool().staticReplicas()).extracting(RouterConfig.StaticReplica::id,
                RouterConfig.StaticReplica::grpc, RouterConfig.StaticReplica::metricsUrl).containsExactly(
                org.assertj.core.groups.Tuple.tuple("replica-a", "127.0.0.1:15002", "http://127.0.0.1:4040"),
                org.assertj.core.groups.Tuple.tuple("replica-b", "127.0.0.1:15003", "http://127.0.0.1:4041"));
    }

    @Test
    void aPoolWrittenInAdvanceNeedsFixedMetricsPorts() {
        assertThatThrownBy(() -> new ReplicaLayout(2, 15002, 0).plannedPool())
                .hasMessageContaining("--metrics-base-port");
    }
}
