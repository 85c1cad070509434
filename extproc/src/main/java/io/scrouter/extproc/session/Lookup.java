package io.scrouter.extproc.session;

/**
 * The result of {@link SessionStore#findOrBind}: the binding in force, and whether this call created it.
 *
 * @param binding the session's binding (never null), as it is after the call: a released binding that the
 *                call revived is live
 * @param created true if the session was unbound and is now bound to the proposed replica by this call
 */
public record Lookup(Binding binding, boolean created) {
}
