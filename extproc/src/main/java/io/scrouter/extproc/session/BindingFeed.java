package io.scrouter.extproc.session;

import java.util.function.BiConsumer;

/**
 * How a router hears of the bindings other routers created, so that its near-cache knows the live sessions
 * before it needs them. The store announces each binding it creates (see {@code RedisSessionStore}). Its value shows when the store is unreachable: a router that already knows a session
 * keeps routing it where it lives instead of guessing. Best effort: a missed entry costs a store read later.
 */
@FunctionalInterface
public interface BindingFeed {

    /** A feed for a router that is alone (the embedded store): nothing to hear. */
    BindingFeed NONE = sessionAndReplica -> {
    };

    /**
     * Delivers the bindings other routers announced since the last call, including any announced while this
     * router was cut off. Called on every pool poll; never throws.
     */
    void catchUp(BiConsumer<String, String> sessionAndReplica);
}
