package io.scrouter.loadtest;

import io.scrouter.loadtest.scenario.DurationText;
import io.scrouter.loadtest.scenario.ScenarioFiles;
import io.scrouter.loadtest.scenario.ScenarioSpec;
import io.scrouter.loadtest.workload.ArrivalLog;
import io.scrouter.loadtest.workload.ScenarioFit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * {@code loadtest fit}: fits a scenario's clients to a log of real sessions (see {@link ArrivalLog} for the
 * forms) and writes it as a scenario file, with the cluster of a base scenario, ready for {@code compare}.
 */
public final class Fit {

    static final Cli.Options OPTIONS = new Cli.Options(Set.of("log", "out", "base", "name", "bin", "set"), Set.of(),
            Set.of("set"), "fit --log FILE (JSON Lines trace or CSV time,session[,event,tasks,taskMs]) --out FILE.yaml "
                    + "[--base steady] [--name fitted] [--bin 5m] [--set key=value ...]");

    private Fit() {
    }

    public static void main(String[] argv) {
        Cli.run("fit", argv, OPTIONS, args -> {
            Path log = Path.of(args.required("log", "FILE"));
            Path out = Path.of(args.required("out", "FILE.yaml"));
            ScenarioSpec base = ScenarioFiles.load(args.get("base", "steady"), args.all("set"));
            long bin = DurationText.parseMillis(args.get("bin", "5m"));
            if (bin < 1_000) {
                throw new IllegalArgumentException("--bin must be a duration of at least 1s, such as 5m");
            }
            String name = args.get("name", "fitted");
            ScenarioFit.Result fit = ScenarioFit.fit(ArrivalLog.read(log), base, name, bin);
            StringBuilder text = new StringBuilder("# Fitted by: loadtest fit --log " + log + " --base " + base.name()
                    + "\n");
            fit.notes().forEach(n -> text.append("#   ").append(n).append('\n'));
            String yaml = ScenarioFiles.toYaml(fit.spec());
            ScenarioFiles.parse(yaml, java.util.List.of()); // what is written must read back
            text.append(yaml);
            Files.writeString(out, text);
            fit.notes().forEach(n -> System.out.println("  " + n));
            System.out.println("wrote " + out + "; run it with: loadtest/bin/loadtest compare --scenario " + out);
        });
    }
}
