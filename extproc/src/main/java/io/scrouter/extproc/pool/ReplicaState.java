package io.scrouter.extproc.pool;

import java.util.Locale;
import java.util.Optional;

/** Lifecycle of a replica as the controller (or the publisher) reports it. */
public enum ReplicaState {
    /** Serves its sessions and takes new ones. */
    READY,
    /** Started but not fit to serve yet: no new sessions. */
    WARMING,
    /** Being replaced or scaled in: keeps its sessions, gets no new ones. */
    DRAINING;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<ReplicaState> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "ready" -> Optional.of(READY);
            case "warming" -> Optional.of(WARMING);
            case "draining" -> Optional.of(DRAINING);
            default -> Optional.empty();
        };
    }
}
