package io.scrouter.loadtest;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * How a loadtest command starts and fails: bad input (a wrong option, scenario key, file or number) ends the
 * command with one line saying what was wrong and exit status 2, never with a stack trace.
 */
public final class Cli {

    /** A command's body, given its parsed options. */
    @FunctionalInterface
    public interface Body {
        void run(Args args) throws Exception;
    }

    /** How a command's options are parsed: see {@link Args}. */
    public record Options(java.util.Set<String> known, java.util.Set<String> switches,
                          java.util.Set<String> repeatable, String usage) {
    }

    private Cli() {
    }

    public static void run(String command, String[] argv, Options options, Body body) {
        try {
            for (String a : argv) {
                if (a.equals("--help") || a.equals("-h")) {
                    System.out.println("usage: loadtest " + options.usage());
                    return;
                }
            }
            Args args = new Args(argv, options.known(), options.switches(), options.repeatable(), options.usage());
            body.run(args);
        } catch (IllegalArgumentException e) {
            fail(command, e.getMessage());
        } catch (UncheckedIOException e) {
            fail(command, e.getCause().getMessage());
        } catch (IOException e) {
            fail(command, e.getMessage());
        } catch (Exception e) {
            System.err.println("loadtest " + command + ": failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void fail(String command, String message) {
        System.err.println("loadtest " + command + ": " + message);
        System.exit(2);
    }
}
