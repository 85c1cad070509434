package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The build reaches Maven Central through Maven's own built-in definition and nothing else: the settings block
 * every other repository (Spark's parent POM declares an extra one) with a mirror that names no host, and no
 * POM or settings file names a repository host of its own.
 */
class BuildSettingsTest {

    /** XML namespaces and schema locations, and the blocked mirror's placeholder: no repository among them. */
    private static final Set<String> ALLOWED_HOSTS = Set.of("maven.apache.org", "www.w3.org", "0.0.0.0");

    private static List<Path> buildFiles() throws IOException {
        try (Stream<Path> files = Files.walk(RepoFiles.root())) {
            return files.filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .filter(p -> p.getFileName().toString().equals("pom.xml")
                            || p.getFileName().toString().equals("settings.xml"))
                    .toList();
        }
    }

    @Test
    void settingsBlockEveryRepositoryButCentralWithAHostlessMirror() {
        String settings = RepoFiles.read(RepoFiles.root().resolve(".mvn/settings.xml"));
        assertThat(settings).contains("<mirrorOf>*,!central</mirrorOf>", "<blocked>true</blocked>",
                "<url>http://0.0.0.0/</url>");
        assertThat(settings).doesNotContain("<repositories>", "<pluginRepositories>");
    }

    @Test
    void noBuildFileNamesARepositoryHost() throws IOException {
        List<Path> files = buildFiles();
        assertThat(files).extracting(RepoFiles::relative).contains("pom.xml", ".mvn/settings.xml",
                "extproc/pom.xml");
        Pattern url = Pattern.compile("https?://([a-zA-Z0-9.-]+)");
        Set<String> hosts = new TreeSet<>();
        for (Path file : files) {
            String text = RepoFiles.read(file);
            assertThat(text).as("%s declares no repository", RepoFiles.relative(file))
                    .doesNotContain("<repositories>", "<pluginRepositories>", "<distributionManagement>");
            Matcher m = url.matcher(text);
            while (m.find()) {
                hosts.add(m.group(1));
            }
        }
        assertThat(hosts).isSubsetOf(ALLOWED_HOSTS);
    }
}
