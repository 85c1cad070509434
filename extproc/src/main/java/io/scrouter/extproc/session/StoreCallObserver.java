package io.scrouter.extproc.session;

/** Told about every session-store call: which operation, how long it took, whether it failed. */
@FunctionalInterface
public interface StoreCallObserver {

    StoreCallObserver NONE = (operation, nanos, error) -> { };

    void completed(String operation, long elapsedNanos, Throwable error);
}
