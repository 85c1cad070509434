/**
 * What the command lines of scrouter share: defaults from environment variables, the version from the jar
 * manifest, converters that answer a wrong value with a sentence instead of a stack trace, and one way to run a
 * command and turn its outcome into an exit code. The commands themselves live next to what they run
 * ({@code RunCommand}, {@code envoy.CheckCommand}, {@code publisher.PublisherCommand}).
 */
package io.scrouter.extproc.cli;
