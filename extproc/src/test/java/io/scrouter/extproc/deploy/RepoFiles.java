package io.scrouter.extproc.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Locates the deployment files at the repository root, whichever directory the tests run from. */
final class RepoFiles {

    private RepoFiles() {
    }

    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path candidate = dir; candidate != null; candidate = candidate.getParent()) {
            if (Files.isDirectory(candidate.resolve("envoy")) && Files.isDirectory(candidate.resolve("istio"))
                    && Files.isRegularFile(candidate.resolve("pom.xml"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("no repository root with envoy/ and istio/ above " + dir);
    }

    /** Every standalone Envoy bootstrap shipped in {@code envoy/}. */
    static List<Path> envoyBootstraps() {
        return list(root().resolve("envoy"), 1, p -> p.toString().endsWith(".yaml"));
    }

    /**
     * Every YAML file under {@code istio/} that the kustomizations install, kustomizations included.
     * {@code istio/examples/} holds workloads for the user to adapt (Spark replicas with the publisher), not
     * part of this install; their own test checks them.
     */
    static List<Path> istioYaml() {
        Path examples = root().resolve("istio").resolve("examples");
        return list(root().resolve("istio"), Integer.MAX_VALUE,
                p -> p.toString().endsWith(".yaml") && !p.startsWith(examples));
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String relative(Path file) {
        return root().relativize(file).toString();
    }

    private static List<Path> list(Path dir, int depth, java.util.function.Predicate<Path> keep) {
        try (Stream<Path> files = Files.walk(dir, depth)) {
            return files.filter(Files::isRegularFile).filter(keep).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
