package io.scrouter.loadtest.fault;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ChildRouterTest {

    @Test
    void readsAnUnlabelledGaugeFromPrometheusText() {
        String body = "# HELP scrouter_near_cache_sessions x\nscrouter_near_cache_sessions 19999.0\n"
                + "scrouter_near_cache_sessions_other 5\n";
        assertThat(ChildRouter.metric(body, "scrouter_near_cache_sessions")).isEqualTo(19999L);
        assertThat(ChildRouter.metric(body, "absent")).isEqualTo(-1L);
    }
}
