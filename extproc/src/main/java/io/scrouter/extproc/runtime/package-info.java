/**
 * What the service runs on: its clocks and deadline timer behind one interface ({@link
 * io.scrouter.extproc.runtime.TimeSource}), so that tests move time instead of waiting for it, and its background
 * threads.
 */
package io.scrouter.extproc.runtime;
