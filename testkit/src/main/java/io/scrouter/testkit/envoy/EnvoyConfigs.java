package io.scrouter.testkit.envoy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.extensions.access_loggers.file.v3.FileAccessLog;
import io.envoyproxy.envoy.extensions.access_loggers.stream.v3.StderrAccessLog;
import io.envoyproxy.envoy.extensions.access_loggers.stream.v3.StdoutAccessLog;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.header_mutation.v3.HeaderMutation;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Envoy configuration the way Envoy does (YAML to JSON to proto), into the Envoy 1.34 protos. Unknown
 * fields and unregistered {@code @type}s fail, so a misspelt field breaks the build instead of the proxy.
 */
public final class EnvoyConfigs {

    public static final ObjectMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Every type that may appear in a {@code typed_config} of our configs; anything else is an error. */
    public static final JsonFormat.TypeRegistry TYPES = JsonFormat.TypeRegistry.newBuilder()
            .add(HttpConnectionManager.getDescriptor())
            .add(ExternalProcessor.getDescriptor())
            .add(Router.getDescriptor())
            .add(HeaderMutation.getDescriptor())
            .add(JwtAuthentication.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.http.early_header_mutation.header_mutation.v3.HeaderMutation
                    .getDescriptor())
            .add(HttpProtocolOptions.getDescriptor())
            .add(StdoutAccessLog.getDescriptor())
            .add(StderrAccessLog.getDescriptor())
            .add(FileAccessLog.getDescriptor())
            .add(DownstreamTlsContext.getDescriptor())
            .add(UpstreamTlsContext.getDescriptor())
            .build();

    private static final JsonFormat.Parser PARSER = JsonFormat.parser().usingTypeRegistry(TYPES);

    private EnvoyConfigs() {
    }

    public static Bootstrap bootstrap(String yaml) throws InvalidProtocolBufferException {
        return parse(yamlTree(yaml), Bootstrap.newBuilder());
    }

    @SuppressWarnings("unchecked")
    public static <T extends Message> T parse(JsonNode json, Message.Builder into)
            throws InvalidProtocolBufferException {
        try {
            PARSER.merge(JSON.writeValueAsString(json), into);
        } catch (IOException e) {
            if (e instanceof InvalidProtocolBufferException invalid) {
                throw invalid;
            }
            throw new UncheckedIOException(e);
        }
        return (T) into.build();
    }

    public static JsonNode yamlTree(String yaml) {
        try {
            return YAML.readTree(yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** All documents of a multi-document YAML file (Kubernetes manifests). */
    public static List<JsonNode> yamlDocuments(String yaml) {
        try (var parser = YAML.createParser(yaml)) {
            List<JsonNode> docs = new ArrayList<>();
            for (var it = YAML.readValues(parser, JsonNode.class); it.hasNext(); ) {
                JsonNode doc = it.next();
                if (doc != null && !doc.isNull() && !doc.isMissingNode()) {
                    docs.add(doc);
                }
            }
            return docs;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static <T extends Message> T unpack(Any any, Class<T> type) {
        try {
            return any.unpack(type);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("typed_config " + any.getTypeUrl() + " is not a "
                    + type.getSimpleName(), e);
        }
    }
}
