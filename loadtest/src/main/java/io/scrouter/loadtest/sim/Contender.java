package io.scrouter.loadtest.sim;

import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * A placement approach in the comparison. {@code perRouter} builds a fresh rule for each simulated router,
 * so stateful ones (round-robin) keep per-router state as separate router processes would.
 */
public record Contender(String name, String summary, Function<Context, PlacementRule> perRouter) {

    /** What a rule may be built from: only the oracle looks at {@code trueUtilisation}. */
    public record Context(ToDoubleFunction<String> trueUtilisation) {
    }
}
