package io.scrouter.loadtest;

import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceFormat;
import io.scrouter.loadtest.workload.TraceRenderer;
import io.scrouter.loadtest.workload.Workload;

import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** {@code loadtest trace}: writes a scenario's sessions and queries as a JSON Lines trace for the replay tools. */
public final class WriteTrace {

    static final Cli.Options OPTIONS = new Cli.Options(Set.of("scenario", "set", "seed", "out"), Set.of(), Set.of("set"),
            "trace --scenario NAME|FILE [--set key=value ...] [--seed 1] [--out FILE]");

    private WriteTrace() {
    }

    public static void main(String[] argv) {
        Cli.run("trace", argv, OPTIONS, args -> {
            Workload workload = new Workload(ScenarioFiles.load(args.required("scenario", "NAME|FILE"), args.all("set")),
                    args.getLong("seed", 1));
            List<TraceEvent> trace = TraceRenderer.render(workload);
            String out = args.get("out", null);
            try (Writer w = out == null ? new OutputStreamWriter(System.out, StandardCharsets.UTF_8)
                    : Files.newBufferedWriter(Path.of(out))) {
                TraceFormat.write(trace, w);
            }
            if (out != null) {
                System.err.println("wrote " + trace.size() + " events to " + out);
            }
        });
    }
}
