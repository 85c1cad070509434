package io.scrouter.extproc.routing;

/** What a request does to its session's binding besides being routed by it. */
enum RpcKind {
    /** Work: binds a new session, revives a released one, keeps the session alive. */
    WORK,
    /** {@code ReleaseSession}: routed, then the binding is released. */
    RELEASE_SESSION,
    /** Other clean-up ({@code ReleaseExecute}): routed by an existing binding only, never binds. */
    CLEANUP;

    static RpcKind of(String method) {
        if (SparkRpc.RELEASE_SESSION.equals(method)) {
            return RELEASE_SESSION;
        }
        return SparkRpc.isCleanup(method) ? CLEANUP : WORK;
    }
}
