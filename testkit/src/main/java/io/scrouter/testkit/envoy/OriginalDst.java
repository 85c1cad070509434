package io.scrouter.testkit.envoy;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The ORIGINAL_DST cluster's choice of upstream host, following
 * {@code source/extensions/clusters/original_dst/original_dst_cluster.cc}, {@code LoadBalancer::chooseHost}:
 * dynamic metadata at {@code metadata_key} first, then the first value of the header; a value that is not a
 * literal {@code ip:port} counts as absent ({@code original_dst_host_invalid}) and the next source is tried.
 * Our listeners do not restore original destinations, so with neither there is no host: the router answers
 * 503 ({@code Filter::sendNoHealthyUpstreamResponse}) and nothing is dialled, so a request can never loop back
 * into the proxy. The filter-state source comes first in Envoy but nothing in our configs sets it.
 */
final class OriginalDst {

    /** {@code parseInternetAddressAndPortNoThrow(value, false)}: literal v4 {@code a.b.c.d:port} or {@code [v6]:port}. */
    private static final Pattern V4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3}):(\\d{1,5})");
    private static final Pattern V6 = Pattern.compile("\\[([0-9A-Fa-f:.]+)]:(\\d{1,5})");

    private OriginalDst() {
    }

    /** Where the request goes, and which source named it; empty when Envoy would answer 503. */
    static Optional<Choice> choose(EnvoyModel model, Map<String, Struct> dynamicMetadata, String headerValue) {
        if (model.routeMetadata().isPresent()) {
            EnvoyModel.MetadataKey key = model.routeMetadata().get();
            Struct ns = dynamicMetadata.get(key.namespace());
            Value v = ns == null ? null : ns.getFieldsMap().get(key.key());
            if (v != null && v.hasListValue() && v.getListValue().getValuesCount() > 0) {
                v = v.getListValue().getValues(0);
            }
            if (v != null && v.hasStringValue()) {
                Optional<InetSocketAddress> a = parse(v.getStringValue());
                if (a.isPresent()) {
                    return Optional.of(new Choice(a.get(), "metadata"));
                }
            }
        }
        if (model.routeHeader().isPresent() && headerValue != null) {
            Optional<InetSocketAddress> a = parse(headerValue);
            if (a.isPresent()) {
                return Optional.of(new Choice(a.get(), "header"));
            }
        }
        return Optional.empty();
    }

    /** The host chosen and the source it came from ({@code metadata} or {@code header}). */
    record Choice(InetSocketAddress address, String source) {
    }

    static Optional<InetSocketAddress> parse(String value) {
        var v4 = V4.matcher(value);
        if (v4.matches()) {
            for (int i = 1; i <= 4; i++) {
                if (Integer.parseInt(v4.group(i)) > 255) {
                    return Optional.empty();
                }
            }
            int port = Integer.parseInt(v4.group(5));
            return port > 65535 ? Optional.empty()
                    : Optional.of(new InetSocketAddress(value.substring(0, value.lastIndexOf(':')), port));
        }
        var v6 = V6.matcher(value);
        if (v6.matches()) {
            int port = Integer.parseInt(v6.group(2));
            return port > 65535 ? Optional.empty() : Optional.of(new InetSocketAddress(v6.group(1), port));
        }
        return Optional.empty();
    }
}
