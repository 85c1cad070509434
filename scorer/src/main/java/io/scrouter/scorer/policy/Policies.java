package io.scrouter.scorer.policy;

import io.scrouter.scorer.PlacementPolicy;

import java.util.List;

/** Builds a placement policy from its configured name. */
public final class Policies {

    /** Every name {@link #byName} accepts. */
    public static final List<String> NAMES = List.of(PredictedLoadPolicy.NAME, SeedPolicy.NAME);

    /**
     * The policy used when configuration names none: it beats the seed formula in the simulator's burst and
     * multi-router scenarios (see loadtest/README.md) and matches it elsewhere.
     */
    public static final String DEFAULT = PredictedLoadPolicy.NAME;

    private Policies() {
    }

    public static PlacementPolicy byName(String name, PolicySettings settings) {
        if (PredictedLoadPolicy.NAME.equals(name)) {
            return new PredictedLoadPolicy(settings.sessionCap());
        }
        if (SeedPolicy.NAME.equals(name)) {
            return new SeedPolicy(settings.utilisationWeight(), settings.sessionWeight(), settings.sessionCap());
        }
        throw new IllegalArgumentException("unknown placement policy '" + name + "'; known policies: " + NAMES);
    }
}
