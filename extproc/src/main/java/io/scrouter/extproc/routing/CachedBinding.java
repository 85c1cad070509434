package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

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
    /** Read and swapped through {@link #LAST_PUSHED}: a plain field, not an AtomicLong (24 bytes per session). */
    private volatile long lastPushedMillis;

    private static final VarHandle LAST_PUSHED;

    static {
        try {
            LAST_PUSHED = MethodHandles.lookup().findVarHandle(CachedBinding.class, "lastPushedMillis", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis) {
        this(binding, confirmed, pushedAtMillis, Long.MAX_VALUE);
    }

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis, long expiresAtMillis) {
        this.binding = binding;
        this.confirmed = confirmed;
        this.lastPushedMillis = pushedAtMillis;
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
        long last = lastPushedMillis;
        return nowMillis - last >= everyMillis && LAST_PUSHED.compareAndSet(this, last, nowMillis);
    }
}
