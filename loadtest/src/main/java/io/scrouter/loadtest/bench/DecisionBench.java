package io.scrouter.loadtest.bench;

import io.scrouter.extproc.routing.Decision;
import io.scrouter.extproc.routing.Request;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.Placement;
import io.scrouter.scorer.policy.Placer;
import io.scrouter.scorer.policy.Policies;
import io.scrouter.scorer.policy.PolicySettings;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The in-process decision path among 8, 64 and 512 replicas: a known session's lookup and a new session's
 * placement through {@code SessionRouter.decide} (in-memory store), and {@code Placer.place} alone with the
 * default and the seed policy. Short iterations keep the whole run to about two minutes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
public class DecisionBench {

    private static final String PATH = "/spark.connect.SparkConnectService/ExecutePlan";

    @Param({"8", "64", "512"})
    public int replicas;

    private DecisionPath path;
    private String[] known;
    private int nextKnown;
    private List<Candidate> candidates;
    private Placer predicted;
    private Placer seed;
    private final SplittableRandom random = new SplittableRandom(1);

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        path = new DecisionPath(replicas, 2_000_000);
        known = new String[4_096];
        for (int i = 0; i < known.length; i++) {
            known[i] = UUID.randomUUID().toString();
            path.router.decide(Request.of(PATH, known[i])).join();
        }
        candidates = new ArrayList<>(replicas);
        for (int i = 0; i < replicas; i++) {
            candidates.add(new Candidate("r" + i, (i % 11) / 10.0, true, i % 13, i % 3));
        }
        predicted = new Placer(Policies.byName("predicted", PolicySettings.DEFAULTS));
        seed = new Placer(Policies.byName("seed", PolicySettings.DEFAULTS));
    }

    @Benchmark
    public Decision knownSessionDecide() {
        return path.router.decide(Request.of(PATH, known[nextKnown++ & (known.length - 1)])).join();
    }

    @Benchmark
    public Decision newSessionDecide() {
        // Includes building the id, as the request path parses one; the store grows, as it does in service.
        return path.router.decide(Request.of(PATH, new UUID(random.nextLong(), random.nextLong()).toString())).join();
    }

    @Benchmark
    public Optional<Placement> placeDefaultPolicy() {
        return predicted.place(candidates, random);
    }

    @Benchmark
    public Optional<Placement> placeSeedPolicy() {
        return seed.place(candidates, random);
    }
}
