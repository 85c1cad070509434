package io.scrouter.extproc.envoy;

import io.scrouter.extproc.routing.Decision;

/** Told about every answered decision (metrics hook). Called on the answering thread; must be cheap. */
@FunctionalInterface
public interface DecisionObserver {

    DecisionObserver NONE = (decision, nanos, clientSetUpstream) -> { };

    void decided(Decision decision, long elapsedNanos, boolean clientSetUpstream);
}
