package io.scrouter.scorer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CandidateTest {

    @Test
    void replicaIdMustBeNonEmpty() {
        assertThatThrownBy(() -> new Candidate(null, 0.0, true, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replicaId");
        assertThatThrownBy(() -> new Candidate("", 0.0, true, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replicaId");
    }
}
