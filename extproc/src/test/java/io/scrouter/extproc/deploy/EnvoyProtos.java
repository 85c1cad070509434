package io.scrouter.extproc.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.scrouter.testkit.envoy.EnvoyConfigs;
import java.util.List;

/** The deploy tests' short names for {@link EnvoyConfigs}, which the Envoy stand-in reads configs with too. */
final class EnvoyProtos {

    static final ObjectMapper YAML = EnvoyConfigs.YAML;
    static final JsonFormat.TypeRegistry TYPES = EnvoyConfigs.TYPES;

    private EnvoyProtos() {
    }

    static Bootstrap bootstrap(String yaml) throws InvalidProtocolBufferException {
        return EnvoyConfigs.bootstrap(yaml);
    }

    static <T extends Message> T parse(JsonNode json, Message.Builder into) throws InvalidProtocolBufferException {
        return EnvoyConfigs.parse(json, into);
    }

    static JsonNode yamlTree(String yaml) {
        return EnvoyConfigs.yamlTree(yaml);
    }

    static List<JsonNode> yamlDocuments(String yaml) {
        return EnvoyConfigs.yamlDocuments(yaml);
    }

    static <T extends Message> T unpack(Any any, Class<T> type) {
        try {
            return EnvoyConfigs.unpack(any, type);
        } catch (IllegalArgumentException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }
}
