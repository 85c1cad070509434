package io.scrouter.extproc.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The oldest Envoy and Istio the shipped configs work on, stated here once and enforced: every field our
 * bootstraps and EnvoyFilter patches set must exist in that Envoy's API. An older proxy would not reject a newer
 * field: Istio drops unknown fields with only a warning, so {@code allowed_override_modes} (Envoy 1.32) would
 * silently vanish and with it the body-mode allow-list.
 *
 * <p>The field list ({@code envoy-api-fields-1.32.txt}) was generated from Envoy's own {@code api/} protos at
 * the commit it names, by {@code src/test/scripts/envoy_api_fields.py}.
 */
class MinimumEnvoyVersionTest {

    /** Envoy 1.32: {@code allowed_override_modes} (changelogs/1.32.0.yaml); 1.31 added route_cache_action. */
    static final String MINIMUM_ENVOY = "1.32";
    /** The first Istio release whose proxy is Envoy 1.32 (istio/proxy WORKSPACE at tag 1.24.0). */
    static final String MINIMUM_ISTIO = "1.24";

    private static final String FIELDS = "/envoy-api-fields-" + MINIMUM_ENVOY + ".txt";

    private static Set<String> fieldsOfMinimumEnvoy() throws IOException {
        try (InputStream in = MinimumEnvoyVersionTest.class.getResourceAsStream(FIELDS)) {
            assertThat(in).as("field list %s", FIELDS).isNotNull();
            Set<String> fields = new HashSet<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    fields.add(line.trim());
                }
            }
            return fields;
        }
    }

    /** "message field" of every field set anywhere in {@code m}, typed configs unpacked. */
    static Set<String> fieldsSet(Message m) {
        Set<String> out = new TreeSet<>();
        collect(m, out);
        return out;
    }

    private static void collect(Message m, Set<String> out) {
        Descriptor type = m.getDescriptorForType();
        if (type.getFullName().equals(Any.getDescriptor().getFullName())) {
            collect(unpack(m), out);
            return;
        }
        for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
            FieldDescriptor f = e.getKey();
            // A map's entries are synthetic messages; the map field itself is what is checked.
            if (type.getFullName().startsWith("envoy.") && !type.getOptions().getMapEntry()) {
                out.add(type.getFullName() + " " + f.getName());
            }
            if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
                continue;
            }
            if (f.isRepeated()) {
                for (Object item : (List<?>) e.getValue()) {
                    collect((Message) item, out);
                }
            } else {
                collect((Message) e.getValue(), out);
            }
        }
    }

    private static Message unpack(Message any) {
        String url = (String) any.getField(any.getDescriptorForType().findFieldByName("type_url"));
        Descriptor type = EnvoyProtos.TYPES.find(url.substring(url.lastIndexOf('/') + 1));
        assertThat(type).as("typed_config %s is registered in EnvoyProtos.TYPES", url).isNotNull();
        try {
            return DynamicMessage.parseFrom(type,
                    (com.google.protobuf.ByteString) any.getField(any.getDescriptorForType().findFieldByName("value")));
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError("typed_config " + url + " does not parse", e);
        }
    }

    @Test
    void everyFieldOfTheStandaloneBootstrapsExistsInTheMinimumEnvoy() throws IOException {
        Set<String> known = fieldsOfMinimumEnvoy();
        for (Path file : RepoFiles.envoyBootstraps()) {
            Set<String> used = fieldsSet(StandaloneConfig.load(file).bootstrap());
            assertThat(used).as("%s: fields newer than Envoy %s", file.getFileName(), MINIMUM_ENVOY)
                    .isNotEmpty().isSubsetOf(known);
        }
    }

    @Test
    void everyFieldOfTheIstioPatchesExistsInTheMinimumEnvoy() throws IOException {
        Set<String> known = fieldsOfMinimumEnvoy();
        List<EnvoyFilterPatch> patches = EnvoyFilterPatch.all();
        assertThat(patches).isNotEmpty();
        for (EnvoyFilterPatch patch : patches) {
            assertThat(fieldsSet(patch.value())).as("%s: fields newer than Envoy %s (Istio %s)", patch.where(),
                    MINIMUM_ENVOY, MINIMUM_ISTIO).isSubsetOf(known);
        }
    }

    @Test
    void theFieldListKnowsTheFieldsThatSetTheMinimum() throws IOException {
        // Guards the list itself: these are the newest fields we rely on, and a list from an older Envoy (or a
        // broken generator) would not have them.
        assertThat(fieldsOfMinimumEnvoy()).contains(
                "envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor allowed_override_modes",
                "envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor route_cache_action",
                "envoy.config.core.v3.Http2ProtocolOptions initial_stream_window_size");
        // ...and would catch a field we know to be newer (ext_proc on_processing_response, Envoy 1.34).
        assertThat(fieldsOfMinimumEnvoy())
                .doesNotContain("envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor on_processing_response");
    }

    @Test
    void theReadmesStateTheseMinimums() {
        String envoyReadme = RepoFiles.read(RepoFiles.root().resolve("envoy/README.md"));
        String istioReadme = RepoFiles.read(RepoFiles.root().resolve("istio/README.md"));
        assertThat(envoyReadme).contains("Envoy " + MINIMUM_ENVOY + " or later");
        assertThat(istioReadme).contains("Istio " + MINIMUM_ISTIO + " or later");
        assertThat(istioReadme).doesNotContain("Istio 1.19");
    }
}
