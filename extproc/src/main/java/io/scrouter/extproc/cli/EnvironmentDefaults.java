package io.scrouter.extproc.cli;

import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Option defaults from environment variables: {@code --drain-for} of a command whose prefix is
 * {@code SCROUTER_REPLICA_} reads {@code SCROUTER_REPLICA_DRAIN_FOR}. A flag on the command line wins; a blank
 * variable counts as unset. Kubernetes manifests use this to compose values from the downward API.
 */
public final class EnvironmentDefaults implements IDefaultValueProvider {

    private final Map<String, String> env;
    private final Function<String, String> prefixOfCommand;

    /**
     * @param env             the environment to read ({@code System.getenv()} in production)
     * @param prefixOfCommand the variable prefix for a command's qualified name, such as {@code scrouter publish}
     */
    public EnvironmentDefaults(Map<String, String> env, Function<String, String> prefixOfCommand) {
        this.env = Map.copyOf(env);
        this.prefixOfCommand = prefixOfCommand;
    }

    /** The variable that sets {@code option} of a command with {@code prefix}: {@code --metrics-url} -> {@code PREFIX_METRICS_URL}. */
    public static String variable(String prefix, String option) {
        return prefix + option.replaceFirst("^-+", "").toUpperCase(Locale.ROOT).replace('-', '_');
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option) || option.usageHelp() || option.versionHelp()) {
            return null;
        }
        String prefix = prefixOfCommand.apply(option.command().qualifiedName());
        if (prefix == null) {
            return null;
        }
        String value = env.get(variable(prefix, option.longestName()));
        return value == null || value.isBlank() ? null : value;
    }
}
