package io.scrouter.loadtest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code loadtest/bin/loadtest}: the command list its help prints (its header) matches LoadtestCommand's
 * subcommands and options, so the two cannot drift; and help and version answer without a Maven build. The script
 * runs as it is, on a copy of the repository's layout, with {@code mvn} and {@code java} stand-ins on the PATH
 * that only record how they were called.
 */
class LoadtestScriptTest {

    /** The script, from the loadtest module (the tests' working directory). */
    private static final Path SCRIPT = Path.of("bin", "loadtest");
    private static final Pattern HEADER_LINE = Pattern.compile("(?m)^#   loadtest/bin/loadtest (\\S+)(.*)$");
    private static final Pattern OPTION = Pattern.compile("--[a-z][a-z-]*");

    private static CommandLine commands() {
        return LoadtestCommand.commandLine(Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()));
    }

    /** The commands of the script's header, in order, each with every option its lines show. */
    private static Map<String, Set<String>> header() throws IOException {
        Map<String, Set<String>> commands = new LinkedHashMap<>();
        Matcher m = HEADER_LINE.matcher(Files.readString(SCRIPT));
        while (m.find()) {
            Set<String> options = commands.computeIfAbsent(m.group(1), c -> new LinkedHashSet<>());
            Matcher o = OPTION.matcher(m.group(2));
            while (o.find()) {
                options.add(o.group());
            }
        }
        return commands;
    }

    @Test
    void theScriptListsExactlyTheCommandsOfLoadtestCommandInItsOrder() throws IOException {
        List<String> registered = new ArrayList<>(commands().getSubcommands().keySet());
        registered.remove("help");

        assertThat(header().keySet()).containsExactlyElementsOf(registered);
    }

    @Test
    void everyOptionTheScriptShowsExistsOnItsCommand() throws IOException {
        Map<String, CommandLine> subcommands = commands().getSubcommands();
        header().forEach((command, options) -> {
            CommandSpec spec = subcommands.get(command).getCommandSpec();
            for (String option : options) {
                assertThat(spec.findOption(option)).as("loadtest/bin/loadtest's header shows " + command + " " + option)
                        .isNotNull();
            }
        });
    }

    @Test
    void theScriptGivesJvmFlagsOnlyToCommandsThatExist() throws IOException {
        String script = Files.readString(SCRIPT);
        String flags = script.substring(script.indexOf("case \"$command\" in"), script.lastIndexOf("esac"));
        Matcher m = Pattern.compile("(?m)^  ([a-z|-]+)\\)").matcher(flags);
        List<String> named = new ArrayList<>();
        while (m.find()) {
            named.addAll(List.of(m.group(1).split("\\|")));
        }
        assertThat(named).isNotEmpty();
        assertThat(commands().getSubcommands().keySet()).containsAll(named);
    }

    @Test
    void helpVersionAndACommandsHelpAnswerWithoutABuild(@TempDir Path repo) throws Exception {
        Sandbox box = new Sandbox(repo);

        Result help = box.run("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).startsWith("Usage: loadtest/bin/loadtest COMMAND [OPTIONS]").contains("LOADTEST_<OPTION>");
        for (String command : header().keySet()) {
            assertThat(help.out()).containsPattern("(?m)^  " + Pattern.quote(command) + " ");
        }
        assertThat(box.run("-h").out()).isEqualTo(help.out());
        assertThat(box.run("help").out()).isEqualTo(help.out());

        Result none = box.run();
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).isEqualTo(help.out());

        Result version = box.run("--version");
        assertThat(version.exit()).isZero();
        assertThat(version.out()).matches("scrouter \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? \\(sources; not built yet\\)\\R");

        Result compare = box.run("compare", "--help");
        assertThat(compare.exit()).isZero();
        assertThat(compare.out()).contains("  compare     --scenario NAME|FILE").doesNotContain("  matrix ");
        assertThat(box.run("help", "compare").out()).isEqualTo(compare.out());
        assertThat(box.run("sweep", "--variants", "x", "-h").out()).contains("  sweep ");

        Result misspelt = box.run("compair", "--help");
        assertThat(misspelt.exit()).isEqualTo(2);
        assertThat(misspelt.err()).startsWith("unknown command 'compair'; the commands are:");

        assertThat(box.calls()).as("mvn or java called").isEmpty();
    }

    @Test
    void withCurrentClassesHelpComesFromTheCommandsAndARunGetsItsJvmFlags(@TempDir Path repo) throws Exception {
        Sandbox box = new Sandbox(repo);
        box.build();

        assertThat(box.run("compare", "--help").exit()).isZero();
        assertThat(box.run("compair").exit()).as("the commands name the closest one").isZero();
        assertThat(box.run("matrix", "--tuning-seeds", "1-2").exit()).isZero();

        assertThat(box.calls()).hasSize(3);
        assertThat(box.calls().get(0)).startsWith("java ").endsWith(" io.scrouter.loadtest.LoadtestCommand compare --help");
        assertThat(box.calls().get(1)).endsWith(" io.scrouter.loadtest.LoadtestCommand compair");
        assertThat(box.calls().get(2)).contains(" -Xmx3g -cp ")
                .endsWith(" io.scrouter.loadtest.LoadtestCommand matrix --tuning-seeds 1-2");
    }

    @Test
    void aRunBuildsFirstWhenTheClassesAreMissing(@TempDir Path repo) throws Exception {
        Sandbox box = new Sandbox(repo);

        assertThat(box.run("trace", "--scenario", "demo").exit()).isZero();

        assertThat(box.calls()).hasSize(2);
        assertThat(box.calls().get(0)).startsWith("mvn ").contains("-s .mvn/settings.xml").contains("-pl loadtest -am package");
        assertThat(box.calls().get(1)).startsWith("java ").endsWith(" io.scrouter.loadtest.LoadtestCommand trace --scenario demo");
    }

    /** What one run of the script printed and returned. */
    record Result(int exit, String out, String err) {
    }

    /**
     * The script in a copy of the repository's layout, with stand-ins for {@code mvn} and {@code java} that record
     * their arguments and succeed (the stand-in {@code mvn} creates the directory its build would).
     */
    private static final class Sandbox {

        private final Path repo;
        private final Path calls;
        private final Path stubs;

        Sandbox(Path repo) throws IOException {
            this.repo = repo;
            this.calls = repo.resolve("calls.txt");
            this.stubs = Files.createDirectories(repo.resolve("stubs"));
            Path script = repo.resolve("loadtest/bin/loadtest");
            Files.createDirectories(script.getParent());
            Files.copy(SCRIPT, script);
            Files.copy(Path.of("..", "pom.xml"), repo.resolve("pom.xml"));
            for (String tool : List.of("mvn", "java")) {
                Path stub = stubs.resolve(tool);
                Files.writeString(stub, "#!/bin/sh\necho \"" + tool + " $*\" >> '" + calls + "'\n"
                        + (tool.equals("mvn") ? "mkdir -p loadtest/target/lib\n" : ""));
                Files.setPosixFilePermissions(stub, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
        }

        /** Sources older than the build's stamp, as after a build. */
        void build() throws IOException {
            FileTime before = FileTime.from(Instant.now().minus(1, ChronoUnit.HOURS));
            for (String module : List.of("scorer", "testkit", "extproc", "loadtest")) {
                Path src = Files.createDirectories(repo.resolve(module).resolve("src"));
                Path pom = Files.writeString(repo.resolve(module).resolve("pom.xml"), "<project/>\n");
                Files.setLastModifiedTime(src, before);
                Files.setLastModifiedTime(pom, before);
            }
            Files.setLastModifiedTime(repo.resolve("pom.xml"), before);
            Files.createDirectories(repo.resolve("loadtest/target/lib"));
            Files.writeString(repo.resolve("loadtest/target/lib/.built"), "");
        }

        Result run(String... args) throws Exception {
            List<String> command = new ArrayList<>(List.of("bash", repo.resolve("loadtest/bin/loadtest").toString()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command).directory(repo.toFile());
            pb.environment().put("PATH", stubs + ":" + System.getenv("PATH"));
            Path out = repo.resolve("out.txt");
            Path err = repo.resolve("err.txt");
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the script ends").isTrue();
            return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        }

        List<String> calls() throws IOException {
            return Files.exists(calls) ? Files.readAllLines(calls, StandardCharsets.UTF_8) : List.of();
        }
    }
}
