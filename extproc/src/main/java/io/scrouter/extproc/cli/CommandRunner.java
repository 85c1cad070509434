package io.scrouter.extproc.cli;

import io.scrouter.extproc.config.ConfigException;
import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintWriter;
import java.util.Map;
import java.util.function.Function;

/**
 * Runs a picocli command the way every scrouter command line behaves: usage errors print the problem, the
 * closest valid name and the usage, then exit 2; a wrong configuration or argument found while running prints
 * one line naming it and exits 2; anything else is a bug or an outage and keeps its stack trace (exit 1).
 */
public final class CommandRunner {

    /** Exit code of a command line the user can fix: an unknown option, a bad value, a wrong config key. */
    public static final int USAGE = CommandLine.ExitCode.USAGE;

    private CommandRunner() {
    }

    /**
     * Sets up {@code line} and all its subcommands (add them first): options default from {@code env} under the
     * prefix {@code prefixOfCommand} gives each qualified command name; output goes to {@code out} and {@code err}.
     */
    public static CommandLine configure(CommandLine line, Map<String, String> env,
                                        Function<String, String> prefixOfCommand,
                                        PrintWriter out, PrintWriter err) {
        line.setOut(out);
        line.setErr(err);
        line.setCaseInsensitiveEnumValuesAllowed(true);
        line.setDefaultValueProvider(new EnvironmentDefaults(env, prefixOfCommand));
        IParameterExceptionHandler standard = line.getParameterExceptionHandler();
        line.setParameterExceptionHandler((e, args) -> {
            // A misspelt option usually explains the missing one: name it first, with its closest spelling.
            ParseResult parsed = e.getCommandLine().getParseResult();
            if (!(e instanceof UnmatchedArgumentException) && parsed != null && !parsed.unmatched().isEmpty()) {
                return standard.handleParseException(
                        new UnmatchedArgumentException(e.getCommandLine(), parsed.unmatched()), args);
            }
            return standard.handleParseException(e, args);
        });
        line.setExecutionExceptionHandler((e, failed, parsed) -> {
            if (e instanceof ConfigException || e instanceof IllegalArgumentException) {
                failed.getErr().println(failed.getCommandSpec().qualifiedName() + ": " + e.getMessage());
                return USAGE;
            }
            throw e;
        });
        return line;
    }
}
