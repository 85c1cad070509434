package io.scrouter.extproc.envoy;

import io.scrouter.extproc.routing.ReplicaGroups;
import io.scrouter.extproc.routing.SessionIds;

/**
 * Names shared by the service and every Envoy configuration in the repository. The tests under
 * {@code deploy/} read these constants and check that each config in {@code envoy/} and {@code istio/}
 * uses the same names, so this class is the single source of truth.
 */
public final class RouteHeaders {

    /** Header the client sends; the Spark Connect client adds it from the {@code sc://} connection string. */
    public static final String SESSION_ID = SessionIds.HEADER;

    /**
     * Header the service writes with the chosen replica's {@code ip:port}; Envoy's {@code ORIGINAL_DST}
     * cluster reads it ({@code use_http_header}). It must never start with {@code x-envoy-}: Envoy drops
     * ext_proc mutations of those headers silently. Envoy must strip it from client requests before
     * ext_proc runs, or a client could pick its own upstream.
     */
    public static final String UPSTREAM = "x-scrouter-upstream";

    /**
     * The caller's replica group, set by Envoy from an authenticated identity (jwt_authn's claim_to_headers); the
     * client's copy is removed before any filter runs, like {@link #UPSTREAM}.
     */
    public static final String GROUP = ReplicaGroups.HEADER;

    /** Dynamic metadata namespace the service writes, for the stricter {@code metadata_key} variant. */
    public static final String METADATA_NAMESPACE = "scrouter";

    /** Key inside {@link #METADATA_NAMESPACE} that carries the same {@code ip:port} as {@link #UPSTREAM}. */
    public static final String METADATA_UPSTREAM_KEY = "upstream";

    /** gRPC service name the ext_proc cluster health-checks (standard {@code grpc.health.v1}). */
    public static final String HEALTH_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

    /** Default port of the ext_proc gRPC server. */
    public static final int DEFAULT_EXTPROC_PORT = 9002;

    private RouteHeaders() {
    }
}
