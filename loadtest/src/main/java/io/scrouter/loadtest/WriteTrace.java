package io.scrouter.loadtest;

import io.scrouter.loadtest.trace.Scenarios;
import io.scrouter.loadtest.trace.TraceEvent;
import io.scrouter.loadtest.trace.TraceFormat;
import io.scrouter.loadtest.trace.TraceGenerator;

import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** Writes a named scenario's trace as JSON Lines, to a file or to stdout. */
public final class WriteTrace {

    private WriteTrace() {
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, Set.of("scenario", "seed", "out"),
                "trace --scenario " + String.join("|", Scenarios.NAMES) + " [--seed 1] [--out FILE]");
        List<TraceEvent> trace = new TraceGenerator(Scenarios.byName(args.get("scenario", "steady")),
                args.getLong("seed", 1)).generate();
        String out = args.get("out", null);
        try (Writer w = out == null ? new OutputStreamWriter(System.out, StandardCharsets.UTF_8)
                : Files.newBufferedWriter(Path.of(out))) {
            TraceFormat.write(trace, w);
        }
        if (out != null) {
            System.err.println("wrote " + trace.size() + " events to " + out);
        }
    }
}
