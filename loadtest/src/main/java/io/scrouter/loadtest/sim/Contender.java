package io.scrouter.loadtest.sim;

import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * A placement approach in the comparison. {@code perRouter} builds a fresh rule for each simulated router,
 * so stateful ones (round-robin) keep per-router state as separate router processes would.
 *
 * @param simple true for the approaches any load balancer offers without this project (the CI guard's
 *               reference set)
 */
public record Contender(String name, String summary, boolean simple, Function<Context, PlacementRule> perRouter) {

    /** What a rule may be built from: only the greedy-instant rule looks at {@code trueUtilisation}. */
    public record Context(ToDoubleFunction<String> trueUtilisation) {
    }
}
