package io.scrouter.loadtest.cli;

import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;

/** {@code --set key=value}, repeatable: overrides of a scenario's keys, applied in order (a picocli mixin). */
public final class ScenarioOverrides {

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "Override a scenario key, such as clients.loop=open or cluster.replicas=[4,8,16]; "
                    + "repeatable, applied in order.")
    private List<String> overrides = new ArrayList<>();

    public List<String> values() {
        return List.copyOf(overrides);
    }
}
