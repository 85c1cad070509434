package io.scrouter.loadtest.sim;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.routing.Rendezvous;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;
import io.scrouter.scorer.policy.FewestSessionsPolicy;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import io.scrouter.scorer.policy.PredictedLoadPolicy;
import io.scrouter.scorer.policy.RandomPolicy;
import io.scrouter.scorer.policy.SeedPolicy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.random.RandomGenerator;

/**
 * The approaches compared: what a plain load balancer, Envoy or Istio offers, the seed formula (at its
 * design weights and at the best weights a sweep found), the previous and the current default policy, and
 * the greedy-instant rule. Every rule except consistent hashing and greedy-instant runs behind the real
 * {@link Placer} (same filtering of stale replicas, same degraded fallback), so every contender sees the
 * same candidates and none gets a replica with failed probes.
 *
 * <p>{@code random} and {@code fewest-sessions} are the scorer's own policies of those names, so the
 * real-Spark check runs exactly what is simulated. Where a simple rule counts sessions, it counts them per task slot (sessions / slots), as an operator
 * would weight hosts by size in Envoy: on equal replicas that is the plain count, and on unequal ones it
 * keeps the simple rules from losing only for want of a weight.
 */
public final class Contenders {

    /** The name of the greedy-instant rule, which is left out of "best contender". */
    public static final String GREEDY_INSTANT = "greedy-instant";
    public static final String SEED_TUNED = "seed-tuned";

    private Contenders() {
    }

    /** Every contender, in table order; {@code tuned} are the seed weights a sweep found (null: leave it out). */
    public static List<Contender> all(PolicySettings settings, PolicySettings tuned) {
        List<Contender> list = new ArrayList<>();
        list.add(simple("random", "uniformly random ready replica", () -> Policies.byName(RandomPolicy.NAME, settings)));
        list.add(simple("round-robin", "each router cycles through the ready replicas", () -> new Cycle()));
        list.add(new Contender("consistent-hash", "hash of the session id over healthy replicas (Istio consistentHash)",
                true, ctx -> new HashRule()));
        list.add(simple("fewest-sessions", "fewest sessions per task slot in the shared store",
                () -> Policies.byName(FewestSessionsPolicy.NAME, settings)));
        list.add(simple("p2c-sessions", "two random replicas, fewer sessions per slot (Envoy LEAST_REQUEST on sessions)",
                () -> new TwoChoices(c -> c.activeSessions() / slots(c))));
        list.add(simple("p2c-load", "two random replicas, lower smoothed utilisation (LEAST_REQUEST on load)",
                () -> new TwoChoices(Candidate::utilisation)));
        list.add(simple("least-running-pending", "lowest (running + pending) / slots in the last probe",
                () -> new Lowest(Candidate::lastUtilisation)));
        list.add(policy("seed", "seed formula at design weights: 0.9 x EWMA utilisation + 0.1 x min(sessions/50, 1)",
                () -> Policies.byName(SeedPolicy.NAME, settings)));
        if (tuned != null) {
            list.add(policy(SEED_TUNED, String.format(Locale.ROOT,
                    "seed formula at the sweep's best weights: %.2f x utilisation + %.2f x min(sessions/%d, 1)",
                    tuned.utilisationWeight(), tuned.sessionWeight(), tuned.sessionCap()),
                    () -> new SeedPolicy(tuned.utilisationWeight(), tuned.sessionWeight(), tuned.sessionCap())));
        }
        list.add(policy("previous-default", "the default before this comparison: fast EWMA + placements since the "
                + "last sample (reset by it), half and half with the session count", () -> new PreviousDefault(
                        settings.sessionCap())));
        list.add(policy(Policies.DEFAULT, "scrouter default policy",
                () -> Policies.byName(Policies.DEFAULT, settings)));
        list.add(new Contender(GREEDY_INSTANT, "lowest true (running + waiting) / slots at the instant of placement; "
                + "no router can see this", false, ctx -> new GreedyInstant(ctx.trueUtilisation())));
        return list;
    }

    /**
     * The contenders named, in the order given. Besides the names of {@link #all}, {@code seed:U,S,CAP} is the
     * seed formula with those weights and cap, and {@code predicted:W/CAP[/recent|bound]} the default policy with
     * measured weight W, load cap CAP, counting recent sessions (the default's way) or every bound one (its way
     * before the recent count: {@code predicted:0.5/4/bound}); both are for sweeps and experiments.
     */
    public static List<Contender> named(List<String> names, PolicySettings settings, PolicySettings tuned) {
        Map<String, Contender> byName = new LinkedHashMap<>();
        all(settings, tuned).forEach(c -> byName.put(c.name(), c));
        List<Contender> out = new ArrayList<>();
        for (String n : names) {
            Contender c = byName.get(n);
            if (c == null && n.equals(SEED_TUNED)) {
                throw new IllegalArgumentException("seed-tuned needs the sweep's weights: give --seed-weights U,S,CAP "
                        + "(matrix runs the sweep itself)");
            }
            if (c == null) {
                c = variant(n, settings);
            }
            if (c == null) {
                throw new IllegalArgumentException("unknown contender '" + n + "'; known: "
                        + String.join(", ", byName.keySet()) + ", seed:U/S/CAP, predicted:W/CAP[/recent|bound]");
            }
            out.add(c);
        }
        return out;
    }

    private static Contender variant(String n, PolicySettings settings) {
        try {
            if (n.startsWith("seed:")) {
                String[] p = n.substring(5).split("[,/]");
                SeedPolicy seed = new SeedPolicy(Double.parseDouble(p[0]), Double.parseDouble(p[1]), Long.parseLong(p[2]));
                return policy(n, "seed formula " + n.substring(5), () -> seed);
            }
            if (n.startsWith("predicted:")) {
                String[] p = n.substring(10).split("[,/]");
                double w = Double.parseDouble(p[0]);
                double cap = p.length > 1 ? Double.parseDouble(p[1]) : 32.0;
                String count = p.length > 2 ? p[2] : "recent";
                if (p.length > 3 || !(count.equals("recent") || count.equals("bound"))) {
                    throw new IllegalArgumentException("the count is 'recent' or 'bound'");
                }
                return policy(n, "default policy, measured weight " + w + ", load cap " + cap + ", " + count
                        + " sessions counted", () -> new PredictedLoadPolicy(w, cap, count.equals("recent")));
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("contender '" + n + "': " + e.getMessage()
                    + " (write seed:0.5/0.5/50 or predicted:0.4/32/recent)");
        }
        return null;
    }

    private static Contender simple(String name, String summary, java.util.function.Supplier<PlacementPolicy> policy) {
        return new Contender(name, summary, true, ctx -> viaPlacer(policy.get()));
    }

    private static Contender policy(String name, String summary, java.util.function.Supplier<PlacementPolicy> policy) {
        return new Contender(name, summary, false, ctx -> viaPlacer(policy.get()));
    }

    static PlacementRule viaPlacer(PlacementPolicy policy) {
        Placer placer = new Placer(policy);
        return (session, ready, random) -> placer.place(ready, random).map(p -> p.replicaId()).orElse(null);
    }

    private static double slots(Candidate c) {
        return c.slots() > 0 ? c.slots() : 1.0;
    }

    private static final class Cycle implements PlacementPolicy {
        private long next;

        @Override
        public String name() {
            return "round-robin";
        }

        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            return candidates.get((int) (next++ % candidates.size()));
        }
    }

    /** Lowest score, uniformly random among equals (the policy contract forbids list order as tie-break). */
    private record Lowest(ToDoubleFunction<Candidate> score) implements PlacementPolicy {
        @Override
        public String name() {
            return "lowest";
        }

        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            return lowest(candidates, score, random);
        }
    }

    /**
     * Power of two choices: two distinct candidates at random, the lower score wins (a coin on a tie), as
     * Envoy's LEAST_REQUEST does with its default choice count of 2.
     */
    private record TwoChoices(ToDoubleFunction<Candidate> score) implements PlacementPolicy {
        @Override
        public String name() {
            return "p2c";
        }

        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            int n = candidates.size();
            if (n == 1) {
                return candidates.get(0);
            }
            int i = random.nextInt(n);
            int j = random.nextInt(n - 1);
            if (j >= i) {
                j++;
            }
            double a = score.applyAsDouble(candidates.get(i));
            double b = score.applyAsDouble(candidates.get(j));
            if (Math.abs(a - b) <= 1e-12) {
                return candidates.get(random.nextBoolean() ? i : j);
            }
            return candidates.get(a < b ? i : j);
        }
    }

    static Candidate lowest(List<Candidate> candidates, ToDoubleFunction<Candidate> score, RandomGenerator random) {
        Candidate best = null;
        double bestScore = Double.POSITIVE_INFINITY;
        int tied = 0;
        for (Candidate c : candidates) {
            double s = score.applyAsDouble(c);
            if (best == null || s < bestScore - 1e-9) {
                best = c;
                bestScore = s;
                tied = 1;
            } else if (Math.abs(s - bestScore) <= 1e-9 && random.nextInt(++tied) == 0) {
                best = c;
            }
        }
        return best;
    }

    /**
     * Istio's consistent hash ignores load but Envoy's health checks take dead hosts out: so hash over the
     * replicas with fresh probes (all of them when none is fresh). Uses the service's own rendezvous hash.
     */
    private static final class HashRule implements PlacementRule {
        private final Map<String, Replica> replicas = new HashMap<>();

        @Override
        public String place(String session, List<Candidate> ready, RandomGenerator random) {
            if (ready.isEmpty()) {
                return null;
            }
            List<Replica> healthy = new ArrayList<>();
            for (Candidate c : ready) {
                if (c.fresh()) {
                    healthy.add(asReplica(c.replicaId()));
                }
            }
            if (healthy.isEmpty()) {
                ready.forEach(c -> healthy.add(asReplica(c.replicaId())));
            }
            return Rendezvous.pick(session, healthy).id();
        }

        private Replica asReplica(String id) {
            return replicas.computeIfAbsent(id, k -> new Replica(k, "10.0.0." + (1 + replicas.size() % 250) + ":15002",
                    null, ReplicaState.READY));
        }
    }

    /**
     * Lowest true demand per slot at the instant of placement, as if metrics had no lag at all. Not an upper
     * bound: it is greedy on the present, and a session's load lies in its future.
     */
    private record GreedyInstant(ToDoubleFunction<String> trueUtilisation) implements PlacementRule {
        @Override
        public String place(String session, List<Candidate> ready, RandomGenerator random) {
            return ready.isEmpty() ? null
                    : lowest(ready, c -> trueUtilisation.applyAsDouble(c.replicaId()), random).replicaId();
        }
    }

    /**
     * The default policy as it was before this comparison, kept to show what changed: fast EWMA plus the
     * placements since the last sample (which a new sample resets), half and half with the session count.
     */
    private static final class PreviousDefault implements PlacementPolicy {
        private final long sessionCap;

        PreviousDefault(long sessionCap) {
            this.sessionCap = sessionCap;
        }

        @Override
        public String name() {
            return "previous-default";
        }

        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            double load = 0;
            long sessions = 0;
            for (Candidate c : candidates) {
                load += Math.max(0.0, c.utilisation());
                sessions += c.activeSessions();
            }
            double perSession = sessions == 0 || load == 0 ? 1.0 / sessionCap : load / sessions;
            return lowest(candidates, c -> 0.5 * (Math.max(0.0, c.utilisation()) + c.placementsSinceSample() * perSession)
                    + 0.5 * c.activeSessions() * perSession, random);
        }
    }
}
