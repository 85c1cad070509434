package io.scrouter.scorer.policy;

/**
 * Tunables shared by the named policies.
 *
 * @param utilisationWeight weight of smoothed utilisation in the score
 * @param sessionWeight     weight of the bound-session term
 * @param sessionCap        sessions at which the session term saturates at 1
 */
public record PolicySettings(double utilisationWeight, double sessionWeight, long sessionCap) {

    public static final PolicySettings DEFAULTS = new PolicySettings(0.9, 0.1, 50);
}
