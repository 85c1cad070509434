package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A near-cache entry: the binding, and when this router last pushed the session's idle timer to the store.
 * {@code confirmed} is false for a fallback placement the store has not recorded yet.
 */
final class CachedBinding {

    final Binding binding;
    final boolean confirmed;
    private final AtomicLong lastPushedMillis;

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis) {
        this.binding = binding;
        this.confirmed = confirmed;
        this.lastPushedMillis = new AtomicLong(pushedAtMillis);
    }

    /** True for exactly one caller once {@code everyMillis} has passed since the last push. */
    boolean claimPush(long nowMillis, long everyMillis) {
        long last = lastPushedMillis.get();
        return nowMillis - last >= everyMillis && lastPushedMillis.compareAndSet(last, nowMillis);
    }
}
