package io.scrouter.loadtest.sim;

import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.ReplicaState;
import io.scrouter.extproc.routing.Rendezvous;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.PlacementPolicy;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.random.RandomGenerator;

/**
 * The approaches compared: what a plain load balancer or Istio offers, the seed formula, the default
 * policy, and an oracle. The scrouter ones are the real scorer policies behind the real {@link Placer}
 * (same filtering of stale replicas, same degraded fallback); the simple ones are small
 * {@link PlacementPolicy} implementations behind the same {@link Placer}, so every contender sees the same
 * candidates and none gets a replica with failed probes.
 */
public final class Contenders {

    private Contenders() {
    }

    /** Every contender, in table order. */
    public static List<Contender> all(PolicySettings settings) {
        List<Contender> list = new ArrayList<>();
        list.add(new Contender("random", "uniformly random ready replica",
                ctx -> viaPlacer(new Uniform())));
        list.add(new Contender("round-robin", "each router cycles through the ready replicas",
                ctx -> viaPlacer(new Cycle())));
        list.add(new Contender("consistent-hash", "hash of the session id over healthy replicas (Istio consistentHash)",
                ctx -> new HashRule()));
        list.add(new Contender("fewest-sessions", "fewest sessions bound in the shared store",
                ctx -> viaPlacer(new Lowest("fewest-sessions", c -> c.activeSessions()))));
        list.add(new Contender("seed", "seed formula 0.9 x EWMA utilisation + 0.1 x sessions/cap",
                ctx -> viaPlacer(Policies.byName("seed", settings))));
        list.add(new Contender(Policies.DEFAULT, "scrouter default policy",
                ctx -> viaPlacer(Policies.byName(Policies.DEFAULT, settings))));
        list.add(new Contender("oracle", "sees every replica's true load at the instant of placement",
                ctx -> new Oracle(ctx.trueUtilisation())));
        return list;
    }

    /** The contenders named, in the order given. */
    public static List<Contender> named(List<String> names, PolicySettings settings) {
        Map<String, Contender> byName = new HashMap<>();
        all(settings).forEach(c -> byName.put(c.name(), c));
        List<Contender> out = new ArrayList<>();
        for (String n : names) {
            Contender c = byName.get(n);
            if (c == null) {
                throw new IllegalArgumentException("unknown contender '" + n + "'; known: " + byName.keySet());
            }
            out.add(c);
        }
        return out;
    }

    static PlacementRule viaPlacer(PlacementPolicy policy) {
        Placer placer = new Placer(policy);
        return (session, ready, random) -> placer.place(ready, random).map(p -> p.replicaId()).orElse(null);
    }

    private static final class Uniform implements PlacementPolicy {
        @Override
        public String name() {
            return "random";
        }

        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            return candidates.get(random.nextInt(candidates.size()));
        }
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
    private record Lowest(String name, ToDoubleFunction<Candidate> score) implements PlacementPolicy {
        @Override
        public Candidate choose(List<Candidate> candidates, RandomGenerator random) {
            return lowest(candidates, score, random);
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

    /** Lowest true demand at the instant of placement, as if metrics had no lag at all. */
    private record Oracle(ToDoubleFunction<String> trueUtilisation) implements PlacementRule {
        @Override
        public String place(String session, List<Candidate> ready, RandomGenerator random) {
            return ready.isEmpty() ? null
                    : lowest(ready, c -> trueUtilisation.applyAsDouble(c.replicaId()), random).replicaId();
        }
    }
}
