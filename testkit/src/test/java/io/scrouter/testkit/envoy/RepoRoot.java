package io.scrouter.testkit.envoy;

import java.nio.file.Files;
import java.nio.file.Path;

/** Files of the repository, found from wherever the tests run (a module directory). */
final class RepoRoot {

    private RepoRoot() {
    }

    static Path path(String relative) {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("envoy"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("not inside the repository: no envoy/ folder above " + Path.of("")
                    .toAbsolutePath());
        }
        return dir.resolve(relative);
    }
}
