package io.scrouter.scorer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class LoadSampleTest {

    @Test
    void utilisationIsDemandOverSlots() {
        // (2 active + 14 pending) / 2 slots: the t=1 reading of the captured 16-task job.
        assertThat(new LoadSample(2, 14, 2).utilisation()).isEqualTo(8.0);
        assertThat(new LoadSample(1, 0, 4).utilisation()).isEqualTo(0.25);
        assertThat(new LoadSample(3, 0, 8).utilisation()).isCloseTo(0.375, within(1e-15));
    }

    @Test
    void idleReplicaWithSlotsHasZeroUtilisation() {
        assertThat(new LoadSample(0, 0, 2).utilisation()).isZero();
    }

    @Test
    void replicaWithoutSlotsReadsAsFullNeverIdle() {
        // No slots means it cannot run anything: 1 (full) plus whatever demand it already holds.
        assertThat(new LoadSample(0, 0, 0).utilisation()).isEqualTo(1.0);
        assertThat(new LoadSample(2, 3, 0).utilisation()).isEqualTo(6.0);
    }

    @Test
    void negativeCountsAreRejectedWithTheValuesInTheMessage() {
        assertThatThrownBy(() -> new LoadSample(-1, 0, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be negative")
                .hasMessageContaining("active=-1");
        assertThatThrownBy(() -> new LoadSample(0, -3, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pending=-3");
        assertThatThrownBy(() -> new LoadSample(0, 0, -2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxTasks=-2");
    }
}
