package io.scrouter.loadtest;

import io.scrouter.extproc.cli.Converters.DurationValue;
import io.scrouter.extproc.cli.ManifestVersion;
import io.scrouter.loadtest.cli.ScenarioOverrides;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.ArrivalLog;
import io.scrouter.loadtest.workload.ScenarioFit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code loadtest fit}: fits a scenario's clients to a log of real sessions (see {@link ArrivalLog} for the
 * forms) and writes it as a scenario file, with the cluster of a base scenario, ready for {@code compare}.
 */
@Command(name = "fit", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class, sortOptions = false,
        description = "Fit a scenario's clients to a log of real sessions and write it as a scenario file, with the "
                + "cluster of a base scenario, ready for compare.")
public final class Fit implements Callable<Integer> {

    @Option(names = "--log", required = true, paramLabel = "FILE",
            description = "The sessions: a JSON Lines trace, or CSV time,session[,event,tasks,taskMs].")
    Path log;

    @Option(names = "--out", required = true, paramLabel = "FILE.yaml", description = "The scenario file to write.")
    Path out;

    @Option(names = "--base", defaultValue = "steady", paramLabel = "NAME|FILE",
            description = "The scenario whose cluster the fitted one runs on (default: ${DEFAULT-VALUE}).")
    String base;

    @Option(names = "--name", defaultValue = "fitted", paramLabel = "NAME",
            description = "Name of the fitted scenario (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--bin", defaultValue = "5m", paramLabel = "DURATION", converter = DurationValue.class,
            description = "Width of the bins of the arrival rate, at least 1s (default: ${DEFAULT-VALUE}).")
    Duration bin;

    @Mixin
    ScenarioOverrides overrides;

    @Spec
    CommandSpec command;

    Fit() {
    }

    @Override
    public Integer call() throws Exception {
        if (bin.toMillis() < 1_000) {
            throw new ParameterException(command.commandLine(), "--bin must be at least 1s, such as 5m, not " + bin.toMillis() + "ms");
        }
        ScenarioSpec baseSpec = ScenarioFiles.load(base, overrides.values());
        ScenarioFit.Result fit = ScenarioFit.fit(ArrivalLog.read(log), baseSpec, name, bin.toMillis());
        StringBuilder text = new StringBuilder("# Fitted by: loadtest fit --log " + log + " --base " + baseSpec.name()
                + "\n");
        fit.notes().forEach(n -> text.append("#   ").append(n).append('\n'));
        String yaml = ScenarioFiles.toYaml(fit.spec());
        ScenarioFiles.parse(yaml, List.of()); // what is written must read back
        text.append(yaml);
        Files.writeString(out, text);
        fit.notes().forEach(n -> System.out.println("  " + n));
        System.out.println("wrote " + out + "; run it with: loadtest/bin/loadtest compare --scenario " + out);
        return 0;
    }
}
