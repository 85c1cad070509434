package io.scrouter.extproc.deploy;

/** How the service's choice of replica reaches Envoy's ORIGINAL_DST cluster. */
enum UpstreamCarrier {
    /** The {@code RouteHeaders.UPSTREAM} request header ({@code use_http_header}). */
    HEADER,
    /** Dynamic metadata {@code RouteHeaders.METADATA_NAMESPACE}/{@code METADATA_UPSTREAM_KEY}. */
    METADATA
}
