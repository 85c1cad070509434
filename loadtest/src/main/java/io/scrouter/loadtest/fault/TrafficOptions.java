package io.scrouter.loadtest.fault;

import io.scrouter.loadtest.cli.Bounds;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/** The traffic every fault run sends, as options: how many loops send requests, how often one is a new session. */
final class TrafficOptions {

    @Option(names = "--threads", defaultValue = "4", paramLabel = "N",
            description = "Traffic loops, 1 to 64 (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--new-every", defaultValue = "10", paramLabel = "N",
            description = "About one request in N starts a new session, 1 to 1000 (default: ${DEFAULT-VALUE}).")
    int newEvery;

    int threads(CommandSpec spec) {
        return Bounds.within(spec, "--threads", threads, 1, 64);
    }

    int newEvery(CommandSpec spec) {
        return Bounds.within(spec, "--new-every", newEvery, 1, 1000);
    }
}
