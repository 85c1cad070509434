package io.scrouter.extproc.runtime;

import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/** Netty's buffer leak detector: off where the router makes its loops, unless the operator set a level. */
class LeakDetectionTest {

    private ResourceLeakDetector.Level before;

    @BeforeEach
    void remember() {
        before = ResourceLeakDetector.getLevel();
        assumeThat(System.getProperty(IoLoops.LEAK_DETECTION_LEVEL))
                .as("this JVM was started with a leak detection level of its own").isNull();
        assumeThat(System.getProperty(IoLoops.LEAK_DETECTION_LEVEL_OLD))
                .as("this JVM was started with a leak detection level of its own").isNull();
    }

    @AfterEach
    void restore() {
        System.clearProperty(IoLoops.LEAK_DETECTION_LEVEL);
        System.clearProperty(IoLoops.LEAK_DETECTION_LEVEL_OLD);
        ResourceLeakDetector.setLevel(before);
    }

    @Test
    void makingTheLoopsTurnsTheDetectorOff() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);

        try (IoLoops loops = IoLoops.perProcessor()) {
            assertThat(loops.group()).isNotNull();
            assertThat(ResourceLeakDetector.getLevel()).isEqualTo(ResourceLeakDetector.Level.DISABLED);
        }
    }

    @Test
    void aLevelTheOperatorSetIsLeftAlone() {
        for (String property : new String[] {IoLoops.LEAK_DETECTION_LEVEL, IoLoops.LEAK_DETECTION_LEVEL_OLD}) {
            System.setProperty(property, "paranoid");
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);

            assertThat(IoLoops.leakDetectionOffUnlessAsked()).as(property).isFalse();
            assertThat(ResourceLeakDetector.getLevel()).as(property).isEqualTo(ResourceLeakDetector.Level.PARANOID);
            System.clearProperty(property);
        }
    }
}
