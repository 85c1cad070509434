package io.scrouter.extproc.pool;

import java.util.Set;

/**
 * What one pool refresh changed.
 *
 * @param joined       ids new to the pool
 * @param left         ids that vanished (expired or removed from the instance store)
 * @param stateChanged ids present before and after whose state or addresses changed
 */
public record PoolChange(PoolSnapshot before, PoolSnapshot after, Set<String> joined, Set<String> left,
                         Set<String> stateChanged) {

    public boolean isEmpty() {
        return joined.isEmpty() && left.isEmpty() && stateChanged.isEmpty();
    }
}
