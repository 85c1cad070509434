package io.scrouter.scorer.probe;

import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One HTTP GET that does not block the caller: how a probe reads a driver's REST API. The router answers it on its
 * own network threads; tools and tests can use the JDK's client ({@link JdkHttpGetter}).
 */
public interface HttpGetter {

    /**
     * Fetches {@code uri}. The future fails with an {@link java.io.IOException} when the exchange fails, and with
     * one no later than about {@code timeout} when the server does not answer.
     */
    CompletableFuture<Reply> get(URI uri, Duration timeout);

    /** A whole answer: its status and its body. */
    record Reply(int status, byte[] body) {
    }
}
