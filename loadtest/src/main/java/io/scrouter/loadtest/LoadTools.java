package io.scrouter.loadtest;

import java.time.Duration;

/** What the load tools share. */
public final class LoadTools {

    /**
     * How long a load tool's blocking call waits for the router's answer. Long on purpose: a tool records a late
     * answer as a late answer (its latency shows it) rather than failing the run on it.
     */
    public static final Duration ANSWER_WAIT = Duration.ofSeconds(10);

    private LoadTools() {
    }
}
