package io.scrouter.extproc.routing;

import io.scrouter.extproc.session.Binding;

/**
 * A near-cache entry as read or to be held: the binding, and when this router last pushed the session's idle timer
 * to the store. {@code confirmed} is false for a fallback placement the store has not recorded yet. A released
 * binding also carries when it stops routing ({@code expiresAtMillis}), as the store's key does; other entries
 * expire with the near-cache's idle expiry.
 *
 * <p>A value, not the stored entry: {@link SessionTable} keeps these fields in primitive arrays, and the next
 * push is claimed through {@link NearCache#takeTurnToPush}.
 */
final class CachedBinding {

    final Binding binding;
    final boolean confirmed;
    final long pushedAtMillis;
    final long expiresAtMillis;

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis) {
        this(binding, confirmed, pushedAtMillis, Long.MAX_VALUE);
    }

    CachedBinding(Binding binding, boolean confirmed, long pushedAtMillis, long expiresAtMillis) {
        this.binding = binding;
        this.confirmed = confirmed;
        this.pushedAtMillis = pushedAtMillis;
        this.expiresAtMillis = expiresAtMillis;
    }
}
