package io.scrouter.extproc.session;

import java.time.Duration;

/**
 * How long a store keeps each kind of binding.
 *
 * @param idle         a live session idle longer than this expires
 * @param lost         how long a session whose replica left keeps getting the "session lost" error
 * @param releaseGrace how long a released binding still routes the session's late RPCs
 */
public record SessionTtls(Duration idle, Duration lost, Duration releaseGrace) {

    public SessionTtls {
        requirePositive("idle", idle);
        requirePositive("lost", lost);
        requirePositive("releaseGrace", releaseGrace);
    }

    private static void requirePositive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " TTL must be positive, got " + d);
        }
    }
}
