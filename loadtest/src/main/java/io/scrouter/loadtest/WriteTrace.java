package io.scrouter.loadtest;

import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceFormat;
import io.scrouter.loadtest.workload.TraceRenderer;
import io.scrouter.loadtest.workload.Workload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code loadtest trace}: writes a scenario's sessions and queries as a JSON Lines trace for the replay tools. */
@Command(name = "trace", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = "Write a scenario's sessions and queries as a JSON Lines trace for the replay tools.")
public final class WriteTrace implements Callable<Integer> {

    @Option(names = "--scenario", required = true, paramLabel = "NAME|FILE",
            description = "A built-in scenario or a scenario file.")
    String scenario;

    @Mixin
    ScenarioOverrides overrides;

    @Option(names = "--seed", defaultValue = "1", paramLabel = "N",
            description = "Seed of the sessions drawn (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--out", paramLabel = "FILE", description = "The trace file to write (default: standard output).")
    Path out;

    @Spec
    CommandSpec command;

    WriteTrace() {
    }

    @Override
    public Integer call() throws Exception {
        Workload workload = new Workload(ScenarioFiles.load(scenario, overrides.values()), seed);
        List<TraceEvent> trace = TraceRenderer.render(workload);
        if (out == null) {
            Writer w = command.commandLine().getOut();
            TraceFormat.write(trace, w);
            w.flush();
            return 0;
        }
        try (Writer w = Files.newBufferedWriter(out)) {
            TraceFormat.write(trace, w);
        }
        command.commandLine().getErr().println("wrote " + trace.size() + " events to " + out);
        return 0;
    }
}
