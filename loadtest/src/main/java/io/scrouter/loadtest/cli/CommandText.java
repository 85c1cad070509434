package io.scrouter.loadtest.cli;

import picocli.CommandLine.Model.CommandSpec;

import java.util.List;

/** A command as the user typed it, for reports: arguments quoted so that the line can be pasted into a shell. */
public final class CommandText {

    /** How the tools are started: the reports name this, not the Java class. */
    public static final String SCRIPT = "loadtest/bin/loadtest";

    private CommandText() {
    }

    /** {@code loadtest/bin/loadtest bench --note 'a b'}: the command line that ran {@code spec}. */
    public static String of(CommandSpec spec) {
        return of(spec.root().commandLine().getParseResult().originalArgs());
    }

    /** {@link #SCRIPT} followed by {@code args}, each quoted for a POSIX shell where it needs it. */
    public static String of(List<String> args) {
        StringBuilder sb = new StringBuilder(SCRIPT);
        for (String a : args) {
            sb.append(' ').append(a.matches("[A-Za-z0-9_./=,:@%+-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
        }
        return sb.toString();
    }
}
