package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OCI tarball that {@code mvn -Pimage package} builds with Jib: what Kubernetes will run (entrypoint,
 * arguments, user), its labels, and that the dependencies sit in layers below the application's classes. The
 * tarball is read as files; no Docker engine or registry is involved. Without the tarball (the profile needs
 * root and mmdebstrap, and is not part of the default build) the test is skipped with a message.
 */
class ImageTarballTest {

    private static final Path TARBALL = RepoFiles.root().resolve("extproc/target/image/scrouter-extproc.tar");
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Map<String, byte[]> entries;
    private static JsonNode manifest;
    private static JsonNode config;

    // Per test rather than once per class, so that each check is reported as skipped, with the reason.
    @BeforeEach
    void readTarball() throws IOException {
        assumeTrue(Files.isRegularFile(TARBALL), "skipped: no image tarball at " + RepoFiles.relative(TARBALL)
                + "; build it with `mvn -B -s .mvn/settings.xml -pl extproc -am -Pimage package -DskipTests` "
                + "(needs root and the mmdebstrap Debian package)");
        if (entries != null) {
            return;
        }
        try (InputStream in = Files.newInputStream(TARBALL)) {
            entries = Tar.read(in, name -> true);
        }
        JsonNode index = JSON.readTree(entries.get("index.json"));
        manifest = JSON.readTree(blob(index.path("manifests").get(0).path("digest").asText()));
        config = JSON.readTree(blob(manifest.path("config").path("digest").asText()));
    }

    private static byte[] blob(String digest) {
        byte[] b = entries.get("blobs/sha256/" + digest.substring("sha256:".length()));
        assertThat(b).as("blob %s in the tarball", digest).isNotNull();
        return b;
    }

    /** File names in one layer (a gzip-compressed tar). */
    private static List<String> layerFiles(int layer) throws IOException {
        String digest = manifest.path("layers").get(layer).path("digest").asText();
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(blob(digest)))) {
            return new ArrayList<>(Tar.read(in, name -> false).keySet());
        }
    }

    private static int layerHolding(Predicate<String> file) throws IOException {
        for (int i = 0; i < manifest.path("layers").size(); i++) {
            if (layerFiles(i).stream().anyMatch(file)) {
                return i;
            }
        }
        throw new AssertionError("no layer holds the file");
    }

    @Test
    void runsTheRouterAsTheNonRootUserWithTheDeploymentsArguments() {
        JsonNode c = config.path("config");
        assertThat(c.path("User").asText()).as("numeric, non-root").matches("[1-9][0-9]*:[1-9][0-9]*");

        List<String> entrypoint = new ArrayList<>();
        c.path("Entrypoint").forEach(e -> entrypoint.add(e.asText()));
        assertThat(entrypoint.get(0)).isEqualTo("java");
        assertThat(entrypoint).contains("-XX:+ExitOnOutOfMemoryError").endsWith("io.scrouter.extproc.Main")
                .noneMatch(a -> a.startsWith("-XX:MaxRAMPercentage") || a.startsWith("-Xmx"));

        List<String> cmd = new ArrayList<>();
        c.path("Cmd").forEach(e -> cmd.add(e.asText()));
        List<String> deploymentArgs = new ArrayList<>();
        Manifest.only("Deployment").spec().path("template").path("spec").path("containers").get(0).path("args")
                .forEach(a -> deploymentArgs.add(a.asText()));
        assertThat(cmd).isEqualTo(deploymentArgs);

        assertThat(c.path("ExposedPorts").has("9002/tcp")).isTrue();
        List<String> env = new ArrayList<>();
        c.path("Env").forEach(e -> env.add(e.asText()));
        assertThat(env).anyMatch(e -> e.startsWith("PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:"))
                .anyMatch(e -> e.startsWith("JAVA_TOOL_OPTIONS=") && e.contains("-XX:MaxDirectMemorySize="));
    }

    @Test
    void carriesOciLabelsWithTheProjectVersion() {
        JsonNode labels = config.path("config").path("Labels");
        assertThat(labels.path("org.opencontainers.image.title").asText()).isEqualTo("scrouter-extproc");
        assertThat(labels.path("org.opencontainers.image.version").asText()).isEqualTo(projectVersion());
        assertThat(labels.path("org.opencontainers.image.description").asText()).isNotEmpty();
    }

    @Test
    void dependenciesSitInLayersBelowTheApplicationsClasses() throws IOException {
        JsonNode layers = manifest.path("layers");
        assertThat(layers.size()).as("base, dependencies, snapshot dependencies, resources, classes, ...")
                .isGreaterThanOrEqualTo(5);
        int base = layerHolding(f -> f.equals("usr/lib/jvm/java-17-openjdk-amd64/bin/java")
                || f.endsWith("/java-17-openjdk-amd64/bin/java"));
        int dependencies = layerHolding(f -> f.matches("(\\./)?app/libs/redisson-[0-9.]+\\.jar"));
        int scorer = layerHolding(f -> f.matches("(\\./)?app/libs/scorer-.*-SNAPSHOT\\.jar"));
        int classes = layerHolding(f -> f.endsWith("app/classes/io/scrouter/extproc/Main.class"));
        assertThat(base).isZero();
        assertThat(dependencies).as("release dependencies above the base").isGreaterThan(base);
        assertThat(scorer).as("snapshot dependencies change more often").isGreaterThan(dependencies);
        assertThat(classes).as("the application's classes last").isGreaterThan(scorer);

        long depBytes = layers.get(dependencies).path("size").asLong();
        long classBytes = layers.get(classes).path("size").asLong();
        assertThat(classBytes).as("a code change ships a small layer").isLessThan(depBytes / 20);
    }

    @Test
    void deploymentRunsTheTagTheImageIsBuiltUnder() {
        String pom = RepoFiles.read(RepoFiles.root().resolve("extproc/pom.xml"));
        Matcher to = Pattern.compile("<to>\\s*(?:<!--.*?-->\\s*)?<image>([^<]+)</image>", Pattern.DOTALL)
                .matcher(pom);
        assertThat(to.find()).isTrue();
        assertThat(Manifest.only("Deployment").spec().path("template").path("spec").path("containers").get(0)
                .path("image").asText()).isEqualTo(to.group(1));
    }

    private static String projectVersion() {
        String pom = RepoFiles.read(RepoFiles.root().resolve("extproc/pom.xml"));
        Matcher m = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL).matcher(pom);
        assertThat(m.find()).isTrue();
        return m.group(1).trim();
    }

    /** The few lines of ustar reading these checks need (the JDK has no tar reader). */
    static final class Tar {

        private Tar() {
        }

        /** Entry name to content (content kept only where {@code keep} says so; an empty array otherwise). */
        static Map<String, byte[]> read(InputStream in, Predicate<String> keep) throws IOException {
            Map<String, byte[]> out = new HashMap<>();
            byte[] header = new byte[512];
            String longName = null;
            while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
                String name = longName != null ? longName : field(header, 345, 155).isEmpty() ? field(header, 0, 100)
                        : field(header, 345, 155) + "/" + field(header, 0, 100);
                longName = null;
                long size = Long.parseLong(field(header, 124, 12).isEmpty() ? "0" : field(header, 124, 12), 8);
                byte type = header[156];
                byte[] body = in.readNBytes((int) size);
                in.skipNBytes((512 - size % 512) % 512);
                if (type == 'L') {
                    longName = new String(body, StandardCharsets.UTF_8).replace("\0", "");
                } else if (type == '0' || type == 0 || type == '5' || type == '2') {
                    String clean = name.startsWith("./") ? name.substring(2) : name;
                    out.put(clean, keep.test(clean) ? body : new byte[0]);
                }
            }
            return out;
        }

        private static String field(byte[] header, int offset, int length) {
            int end = offset;
            while (end < offset + length && header[end] != 0) {
                end++;
            }
            return new String(header, offset, end - offset, StandardCharsets.US_ASCII).trim();
        }
    }
}
