package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.scrouter.extproc.config.ConfigLoader;
import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.envoy.RouteHeaders;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes side of {@code istio/}: what {@code kubectl apply -k istio/} installs, checked field by
 * field since no cluster or kubectl is available to validate it.
 */
class KubernetesManifestTest {

    private static final String CONFIG_FILE = "/etc/scrouter/scrouter.yaml";

    private final Manifest deployment = Manifest.only("Deployment");

    private JsonNode podSpec() {
        return deployment.spec().path("template").path("spec");
    }

    private JsonNode container() {
        JsonNode containers = podSpec().path("containers");
        assertThat(containers.size()).as("one container in %s", deployment.where()).isEqualTo(1);
        return containers.get(0);
    }

    private JsonNode podLabels() {
        return deployment.spec().path("template").path("metadata").path("labels");
    }

    @Test
    void deploymentRunsAtLeastTwoCopies() {
        assertThat(deployment.spec().path("replicas").asInt())
                .as("every Spark request waits on ext_proc: one copy is a single point of failure")
                .isGreaterThanOrEqualTo(2);
        assertThat(deployment.spec().path("strategy").path("rollingUpdate").path("maxUnavailable").asInt(1))
                .as("a rollout must not remove serving copies first").isZero();
    }

    @Test
    void probesUseGrpcHealthOnTheServicePort() {
        JsonNode container = container();
        assertThat(portNumbers(container.path("ports"), "containerPort"))
                .as("container ports").contains(RouteHeaders.DEFAULT_EXTPROC_PORT);
        for (String probe : List.of("readinessProbe", "livenessProbe")) {
            JsonNode grpc = container.path(probe).path("grpc");
            assertThat(grpc.isObject()).as("%s uses the native gRPC probe", probe).isTrue();
            assertThat(grpc.path("port").asInt()).as("%s port", probe).isEqualTo(RouteHeaders.DEFAULT_EXTPROC_PORT);
        }
        assertThat(container.path("readinessProbe").path("grpc").path("service").asText())
                .as("readiness checks the same service name Envoy health-checks")
                .isEqualTo(RouteHeaders.HEALTH_SERVICE);
    }

    @Test
    void containerHasResourceRequestsAndAMemoryLimit() {
        JsonNode resources = container().path("resources");
        assertThat(resources.path("requests").path("cpu").asText()).isNotEmpty();
        assertThat(resources.path("requests").path("memory").asText()).isNotEmpty();
        assertThat(resources.path("limits").path("memory").asText()).isNotEmpty();
        assertThat(resources.path("requests").path("memory").asText())
                .as("memory request equals the limit: the node never reclaims what the JVM may use")
                .isEqualTo(resources.path("limits").path("memory").asText());
    }

    @Test
    void heapAndDirectMemoryLeaveAQuarterOfTheLimitForTheRestOfTheJvm() {
        long limit = bytes(container().path("resources").path("limits").path("memory").asText());
        String options = env("JAVA_TOOL_OPTIONS").path("value").asText();
        Matcher percent = Pattern.compile("-XX:MaxRAMPercentage=([0-9.]+)").matcher(options);
        Matcher direct = Pattern.compile("-XX:MaxDirectMemorySize=(\\S+)").matcher(options);
        assertThat(percent.find()).as("heap sized from the limit in JAVA_TOOL_OPTIONS: %s", options).isTrue();
        assertThat(direct.find()).as("direct memory bounded (its default equals the heap): %s", options).isTrue();
        double heap = limit * Double.parseDouble(percent.group(1)) / 100;
        long directBytes = bytes(direct.group(1).toUpperCase().replace("M", "Mi").replace("G", "Gi")
                .replace("K", "Ki"));
        // Metaspace, code cache, thread stacks and GC structures take the rest; a quarter is the margin.
        assertThat(heap + directBytes).as("heap %.0f + direct %d bytes within 75%% of the %d-byte limit",
                heap, directBytes, limit).isLessThanOrEqualTo(limit * 0.75);

        // The heap starts at its full size. Grown from the JVM's default start (1/64 of the limit) the serial
        // collector kept it near 29 MB under load, and the young generation was collected 40 times a second.
        Matcher initial = Pattern.compile("-XX:InitialRAMPercentage=([0-9.]+)").matcher(options);
        assertThat(initial.find()).as("initial heap set in JAVA_TOOL_OPTIONS: %s", options).isTrue();
        assertThat(Double.parseDouble(initial.group(1))).as("initial heap percentage")
                .isEqualTo(Double.parseDouble(percent.group(1)));

        // Flags on the image's command line would win over JAVA_TOOL_OPTIONS and undo this sizing; and the two
        // ways of building the image carry the Deployment's options, for a pod that does not set its own.
        String dockerfile = RepoFiles.read(RepoFiles.root().resolve("Dockerfile"));
        assertThat(dockerfile).contains("ENV JAVA_TOOL_OPTIONS=\"" + options + "\"");
        assertThat(RepoFiles.read(RepoFiles.root().resolve("extproc/pom.xml")))
                .contains("<JAVA_TOOL_OPTIONS>" + options + "</JAVA_TOOL_OPTIONS>");
        assertThat(dockerfile).doesNotContain("MaxRAMPercentage=75").doesNotContainPattern(
                "(?m)^ENTRYPOINT.*(MaxRAMPercentage|MaxDirectMemorySize|Xmx)");
    }

    @Test
    void podsSpreadOverZonesAndHostsAndCarryNoServiceAccountToken() {
        List<String> keys = new ArrayList<>();
        podSpec().path("topologySpreadConstraints").forEach(c -> {
            keys.add(c.path("topologyKey").asText());
            assertSelects(deployment.where() + " spread", c.path("labelSelector").path("matchLabels"));
        });
        assertThat(keys).contains("topology.kubernetes.io/zone", "kubernetes.io/hostname");
        assertThat(podSpec().path("automountServiceAccountToken").isBoolean()).isTrue();
        assertThat(podSpec().path("automountServiceAccountToken").asBoolean())
                .as("the router never calls the Kubernetes API").isFalse();
    }

    /** A Kubernetes memory quantity in bytes (binary suffixes only, which is what the manifests use). */
    private static long bytes(String quantity) {
        Matcher m = Pattern.compile("(\\d+)(Ki|Mi|Gi)?").matcher(quantity);
        assertThat(m.matches()).as("memory quantity %s", quantity).isTrue();
        long n = Long.parseLong(m.group(1));
        return m.group(2) == null ? n : switch (m.group(2)) {
            case "Ki" -> n << 10;
            case "Mi" -> n << 20;
            default -> n << 30;
        };
    }

    @Test
    void redisAddressAndPasswordComeFromTheShippedSecret() {
        Manifest secret = Manifest.only("Secret");
        assertThat(secret.namespace()).isEqualTo(deployment.namespace());
        Set<String> secretKeys = new HashSet<>();
        secret.doc().path("stringData").fieldNames().forEachRemaining(secretKeys::add);
        secret.doc().path("data").fieldNames().forEachRemaining(secretKeys::add);

        for (String variable : List.of("SCROUTER_REDIS_ADDRESS", "SCROUTER_REDIS_PASSWORD")) {
            JsonNode ref = env(variable).path("valueFrom").path("secretKeyRef");
            assertThat(ref.isObject()).as("%s comes from a Secret, never inline", variable).isTrue();
            assertThat(ref.path("name").asText()).as("%s secret", variable).isEqualTo(secret.name());
            assertThat(secretKeys).as("%s key in %s", variable, secret.where()).contains(ref.path("key").asText());
        }
        assertThat(env("SCROUTER_PORT").path("value").asText())
                .isEqualTo(String.valueOf(RouteHeaders.DEFAULT_EXTPROC_PORT));
    }

    @Test
    void configFileComesFromTheConfigMapAndMatchesTheServicePort() throws IOException {
        JsonNode container = container();
        List<String> args = new ArrayList<>();
        container.path("args").forEach(a -> args.add(a.asText()));
        assertThat(args).containsSequence("--config", CONFIG_FILE);

        Path configPath = Path.of(CONFIG_FILE);
        JsonNode mount = find(container.path("volumeMounts"), "mountPath", configPath.getParent().toString());
        JsonNode volume = find(podSpec().path("volumes"), "name", mount.path("name").asText());
        Manifest configMap = Manifest.only("ConfigMap");
        assertThat(volume.path("configMap").path("name").asText()).isEqualTo(configMap.name());
        assertThat(configMap.namespace()).isEqualTo(deployment.namespace());

        String fileName = configPath.getFileName().toString();
        JsonNode config = EnvoyProtos.YAML.readTree(configMap.doc().path("data").path(fileName).asText());
        assertThat(config.path("server").path("port").asInt()).isEqualTo(RouteHeaders.DEFAULT_EXTPROC_PORT);
        assertThat(config.fieldNames()).toIterable()
                .containsExactlyInAnyOrder("server", "redis", "pool", "sessions", "placement", "admin", "metrics");
        assertThat(config.path("placement").path("policy").asText()).isNotEmpty();
    }

    @Test
    void serviceAcceptsTheConfigMapWithTheDeploymentsEnvironment() {
        Manifest secret = Manifest.only("Secret");
        Map<String, String> env = new HashMap<>();
        container().path("env").forEach(e -> {
            JsonNode ref = e.path("valueFrom").path("secretKeyRef");
            String value = ref.isObject() ? secret.doc().path("stringData").path(ref.path("key").asText()).asText()
                    : e.path("value").asText();
            env.put(e.path("name").asText(), value);
        });
        assertThat(env.keySet()).as("every SCROUTER_ variable is one the service reads")
                .filteredOn(name -> name.startsWith("SCROUTER_"))
                .allSatisfy(name -> assertThat(ConfigLoader.ENV_OVERRIDES).containsKey(name));

        String file = Manifest.only("ConfigMap").doc().path("data").path(Path.of(CONFIG_FILE).getFileName().toString())
                .asText();
        RouterConfig config = ConfigLoader.parse(file, env);
        assertThat(config.server().port()).isEqualTo(RouteHeaders.DEFAULT_EXTPROC_PORT);
        assertThat(config.redis()).as("the Deployment runs against the shared Redis").isPresent();
        assertThat(config.redis().orElseThrow().password()).as("password from the Secret").isNotNull();
        assertThat(config.redis().orElseThrow().addresses())
                .containsExactly(secret.doc().path("stringData").path("address").asText());
    }

    @Test
    void terminationLeavesTimeToDrainBeforeTheRouterStops() throws IOException {
        // Order on termination: preStop sleep (pod still ready to the gateways' stale endpoint lists), then
        // SIGTERM: NOT_SERVING while answering for server.drainPeriod, then the gRPC server stops.
        JsonNode preStop = container().path("lifecycle").path("preStop");
        long preStopSeconds = preStop.path("sleep").path("seconds").asLong(-1);
        assertThat(preStopSeconds).as("preStop sleep seconds").isPositive();
        long drainSeconds = ShippedService.istio().server().drainPeriod().toSeconds();
        assertThat(drainSeconds).as("server.drainPeriod in the ConfigMap").isPositive();
        long stopSeconds = 2;
        assertThat(podSpec().path("terminationGracePeriodSeconds").asLong())
                .as("terminationGracePeriodSeconds covers preStop + drain + stop")
                .isGreaterThanOrEqualTo(preStopSeconds + drainSeconds + stopSeconds);

        JsonNode proxyConfig = EnvoyProtos.YAML.readTree(deployment.doc().path("spec").path("template")
                .path("metadata").path("annotations").path("proxy.istio.io/config").asText("{}"));
        String sidecarDrain = proxyConfig.path("terminationDrainDuration").asText("5s");
        assertThat(io.scrouter.extproc.config.Durations.parse("terminationDrainDuration", sidecarDrain).toSeconds())
                .as("the router's sidecar carries the gateway's streams until the router has drained")
                .isGreaterThanOrEqualTo(preStopSeconds + drainSeconds);
    }

    @Test
    void imageIsTheOneTheDockerfileBuilds() {
        String dockerfile = RepoFiles.read(RepoFiles.root().resolve("Dockerfile"));
        Matcher tag = Pattern.compile("docker build -t (\\S+) ").matcher(dockerfile);
        assertThat(tag.find()).as("Dockerfile names its image in a docker build line").isTrue();
        assertThat(container().path("image").asText()).isEqualTo(tag.group(1));

        assertThat(dockerfile).contains("EXPOSE " + RouteHeaders.DEFAULT_EXTPROC_PORT)
                .containsPattern("(?m)^FROM eclipse-temurin:17-jre")
                .containsPattern("(?m)^USER (?!root|0)\\S+")
                .contains("org.opencontainers.image.version=\"" + projectVersion() + "\"");

        // Layered: the dependencies the image profile copies, then the application jar the build produces.
        List<String> copied = new ArrayList<>();
        Matcher copy = Pattern.compile("(?m)^COPY (\\S+) ").matcher(dockerfile);
        while (copy.find()) {
            copied.add(copy.group(1));
        }
        String pom = RepoFiles.read(RepoFiles.root().resolve("extproc/pom.xml"));
        assertThat(pom).contains("<outputDirectory>${project.build.directory}/image/libs</outputDirectory>");
        assertThat(copied).containsExactly("extproc/target/image/libs/",
                "extproc/target/extproc-" + projectVersion() + ".jar");

        // The build context sends exactly those inputs; everything else stays out of it.
        List<String> ignore = RepoFiles.read(RepoFiles.root().resolve(".dockerignore")).lines()
                .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        assertThat(ignore.get(0)).isEqualTo("*");
        assertThat(ignore.subList(1, ignore.size())).containsExactlyInAnyOrderElementsOf(
                copied.stream().map(c -> "!" + c).toList());
    }

    @Test
    void serviceIsGrpcAndSelectsTheDeploymentPods() {
        Manifest service = Manifest.only("Service");
        assertThat(service.namespace()).isEqualTo(deployment.namespace());
        assertSelects(service.where(), service.spec().path("selector"));
        JsonNode port = service.spec().path("ports").get(0);
        assertThat(port.path("port").asInt()).isEqualTo(RouteHeaders.DEFAULT_EXTPROC_PORT);
        assertThat(port.path("appProtocol").asText()).as("Istio picks HTTP/2 from appProtocol").isEqualTo("grpc");
    }

    @Test
    void podDisruptionBudgetKeepsACopyOfTheDeployment() {
        Manifest pdb = Manifest.only("PodDisruptionBudget");
        assertThat(pdb.namespace()).isEqualTo(deployment.namespace());
        assertSelects(pdb.where(), pdb.spec().path("selector").path("matchLabels"));
        int minAvailable = pdb.spec().path("minAvailable").asInt(0);
        assertThat(minAvailable).isPositive().isLessThan(deployment.spec().path("replicas").asInt());
    }

    @Test
    void deploymentSelectorMatchesItsPods() {
        assertSelects(deployment.where(), deployment.spec().path("selector").path("matchLabels"));
    }

    @Test
    void everyKustomizationListsEveryManifestBesideIt() throws IOException {
        List<Path> kustomizations = RepoFiles.istioYaml().stream()
                .filter(p -> p.getFileName().toString().equals(Manifest.KUSTOMIZATION))
                .toList();
        assertThat(kustomizations).extracting(RepoFiles::relative).contains("istio/" + Manifest.KUSTOMIZATION);
        for (Path kustomization : kustomizations) {
            Path dir = kustomization.getParent();
            JsonNode doc = EnvoyProtos.yamlTree(RepoFiles.read(kustomization));
            assertThat(doc.path("kind").asText()).isIn("Kustomization", "Component");
            Set<String> listed = new HashSet<>();
            for (JsonNode r : doc.path("resources")) {
                Path target = dir.resolve(r.asText()).normalize();
                if (Files.isDirectory(target)) {
                    // Another kustomization (base, parameters), not a file beside this one.
                    assertThat(target.resolve(Manifest.KUSTOMIZATION)).as("%s resource %s", RepoFiles.relative(
                            kustomization), r.asText()).isRegularFile();
                } else {
                    listed.add(r.asText());
                }
            }
            for (JsonNode c : doc.path("components")) {
                Path component = dir.resolve(c.asText()).normalize().resolve(Manifest.KUSTOMIZATION);
                assertThat(EnvoyProtos.yamlTree(RepoFiles.read(component)).path("kind").asText())
                        .as("%s component %s", RepoFiles.relative(kustomization), c.asText()).isEqualTo("Component");
            }

            Set<String> present = new HashSet<>();
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(p -> p.toString().endsWith(".yaml")).toList()) {
                    boolean isObject = EnvoyProtos.yamlDocuments(RepoFiles.read(file)).stream()
                            .anyMatch(Manifest::isKubernetesObject);
                    if (isObject && !file.equals(kustomization)) {
                        present.add(file.getFileName().toString());
                    }
                }
            }
            assertThat(listed).as("%s resources", RepoFiles.relative(kustomization))
                    .containsExactlyInAnyOrderElementsOf(present);
        }
    }

    @Test
    void everyObjectHasANamespaceAndAKnownKind() {
        assertThat(Manifest.all()).allSatisfy(m -> {
            assertThat(Manifest.isKubernetesObject(m.doc())).as(m.where()).isTrue();
            if (!m.kind().equals("Namespace")) {
                assertThat(m.namespace()).as("%s namespace", m.where()).isNotEmpty();
            }
        });
        assertThat(Manifest.all()).extracting(Manifest::kind).containsOnly("Namespace", "Secret", "ConfigMap",
                "Deployment", "Service", "PodDisruptionBudget", "Gateway", "VirtualService", "EnvoyFilter",
                "AuthorizationPolicy", "RequestAuthentication", "NetworkPolicy", "PodMonitor", "PrometheusRule");
        assertThat(Manifest.only("Namespace").name()).isEqualTo(deployment.namespace());
    }

    private void assertSelects(String where, JsonNode selector) {
        assertThat(selector.size()).as("%s selector", where).isPositive();
        selector.properties().forEach(e -> assertThat(podLabels().path(e.getKey()).asText())
                .as("%s selects label %s", where, e.getKey()).isEqualTo(e.getValue().asText()));
    }

    private JsonNode env(String name) {
        return find(container().path("env"), "name", name);
    }

    private static JsonNode find(JsonNode list, String field, String value) {
        for (JsonNode item : list) {
            if (item.path(field).asText().equals(value)) {
                return item;
            }
        }
        throw new AssertionError("no entry with " + field + "=" + value + " in " + list);
    }

    private static List<Integer> portNumbers(JsonNode ports, String field) {
        List<Integer> numbers = new ArrayList<>();
        ports.forEach(p -> numbers.add(p.path(field).asInt()));
        return numbers;
    }

    /** The version the shaded jar carries, from the module's parent declaration. */
    private static String projectVersion() {
        String pom = RepoFiles.read(RepoFiles.root().resolve("extproc/pom.xml"));
        Matcher m = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL).matcher(pom);
        assertThat(m.find()).isTrue();
        return m.group(1).trim();
    }
}
