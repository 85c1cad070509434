package io.scrouter.extproc.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;

/** One Kubernetes object from a YAML file under {@code istio/}. */
record Manifest(Path file, JsonNode doc) {

    static final String KUSTOMIZATION = "kustomization.yaml";

    /**
     * Every object in every manifest file under {@code istio/}, as written (before kustomize's parameters are
     * applied, so with their default values). Kustomizations, components and the local-config install
     * parameters are not objects the cluster receives.
     */
    static List<Manifest> all() {
        return RepoFiles.istioYaml().stream()
                .filter(p -> !p.getFileName().toString().equals(KUSTOMIZATION))
                .flatMap(p -> EnvoyProtos.yamlDocuments(RepoFiles.read(p)).stream().map(d -> new Manifest(p, d)))
                .filter(m -> !m.isLocalConfig())
                .toList();
    }

    /** Kustomize reads these objects but never emits them (the install parameters). */
    boolean isLocalConfig() {
        return "true".equals(doc.path("metadata").path("annotations").path("config.kubernetes.io/local-config")
                .asText());
    }

    static List<Manifest> ofKind(String kind) {
        return all().stream().filter(m -> m.kind().equals(kind)).toList();
    }

    static Manifest only(String kind) {
        List<Manifest> found = ofKind(kind);
        if (found.size() != 1) {
            throw new AssertionError("expected exactly one " + kind + " under istio/, found " + found.size());
        }
        return found.get(0);
    }

    /** A Kubernetes object names its API and kind; anything else in a YAML file is not one. */
    static boolean isKubernetesObject(JsonNode doc) {
        return doc.hasNonNull("apiVersion") && doc.hasNonNull("kind");
    }

    String kind() {
        return doc.path("kind").asText();
    }

    String name() {
        return doc.path("metadata").path("name").asText();
    }

    String namespace() {
        return doc.path("metadata").path("namespace").asText();
    }

    JsonNode spec() {
        return doc.path("spec");
    }

    String where() {
        return RepoFiles.relative(file) + " " + kind() + "/" + name();
    }
}
