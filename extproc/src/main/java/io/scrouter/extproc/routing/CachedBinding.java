package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A near-cache entry: the binding, and when this router last pushed the session's idle timer to the store.
 * {@code confirmed} is false for a fallback placement the store has not recorded yet. A released binding
 * also carries when it stops routing ({@code expiresAtMillis}), as the store's key does; other entries
 * expire with the cache's idle expiry.
 */
final class CachedBinding {

    final Binding binding;
    final boolean confirmed;
    final long expiresAtMillis;
    private final AtomicLong lastPushedMillis;

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis) {
        this(binding, confirmed, pushedAtMillis, Long.MAX_VALUE);
    }

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis, long expiresAtMillis) {
        this.binding = binding;
        this.confirmed = confirmed;
        this.lastPushedMillis = new AtomicLong(pushedAtMillis);
        this.expiresAtMillis = expiresAtMillis;
    }

    boolean expired(long nowMillis) {
        return nowMillis >= expiresAtMillis;
    }

    /**
     * True for exactly one caller once {@code everyMillis} has passed since the last push: that caller pushes the
     * session to the store (its idle timer, or the binding itself when unconfirmed); the others skip it.
     */
    boolean takeTurnToPush(long nowMillis, long everyMillis) {
        long last = lastPushedMillis.get();
        return nowMillis - last >= everyMillis && lastPushedMillis.compareAndSet(last, nowMillis);
    }
}
