package io.scrouter.loadtest.bench;

import io.scrouter.extproc.cli.ManifestVersion;
import org.openjdk.jmh.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code loadtest bench-jmh [JMH options]}: the JMH benchmarks of {@link DecisionBench}, run by JMH's own launcher.
 * Every argument other than this command's {@code --help} and {@code --version} goes to JMH unchanged, so its
 * options ({@code -e Decide}, {@code -f 1}, {@code -prof gc}) work as JMH documents them, and JMH reports a wrong
 * one; its own help is {@code bench-jmh -- -h}.
 */
@Command(name = "bench-jmh", mixinStandardHelpOptions = true, versionProvider = ManifestVersion.class,
        customSynopsis = "loadtest bench-jmh [-hV] [JMH-OPTION...]",
        description = {"JMH: the in-process decision path among 8, 64 and 512 replicas (DecisionBench), by JMH's own "
                + "launcher.",
                "Every other argument goes to JMH, such as -e Decide or -f 1 -wi 1; JMH's own options: bench-jmh -- -h."})
public final class JmhBench implements Callable<Integer> {

    @Unmatched
    List<String> jmhOptions = new ArrayList<>();

    public JmhBench() {
    }

    /** What JMH's launcher is given: the benchmarks of this module, then the options as typed. */
    List<String> jmhArguments() {
        List<String> args = new ArrayList<>();
        args.add(DecisionBench.class.getSimpleName());
        // After "--" picocli hands JMH's own -h through; JMH has no use for the separator itself.
        jmhOptions.stream().filter(a -> !a.equals("--")).forEach(args::add);
        return args;
    }

    @Override
    public Integer call() throws Exception {
        Main.main(jmhArguments().toArray(String[]::new));
        return 0;
    }
}
