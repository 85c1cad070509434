package io.scrouter.extproc.session;

import java.util.function.BiConsumer;

/**
 * How routers tell each other about new bindings, so that every router's near-cache knows the live sessions
 * before it needs them. Its value shows when the store is unreachable: a router that already knows a session
 * keeps routing it where it lives instead of guessing. Best effort: a missed entry costs a store read later.
 */
public interface BindingFeed {

    /** A feed for a router that is alone (the embedded store): nothing to tell, nothing to hear. */
    BindingFeed NONE = new BindingFeed() {
        @Override
        public void announce(String sessionId, String replica) {
        }

        @Override
        public void catchUp(BiConsumer<String, String> sessionAndReplica) {
        }
    };

    /** Tells the other routers that {@code sessionId} was bound to {@code replica}. Not awaited; never throws. */
    void announce(String sessionId, String replica);

    /**
     * Delivers the bindings other routers announced since the last call, including any announced while this
     * router was cut off. Called on every pool poll; never throws.
     */
    void catchUp(BiConsumer<String, String> sessionAndReplica);
}
