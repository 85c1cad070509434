package io.scrouter.loadtest.bench;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One load at one number of routers: the measured rounds of every target, interleaved in time. Ratios pair the
 * router's round {@code i} with the no-op's round {@code i}, which ran next to it.
 */
record Block(SessionMix load, int inFlight, int routers, Map<Target, List<Round>> rounds,
             Map<Target, ProcessBench.Warmup> warmups, Map<Target, List<SchedTrace.Waits>> waits,
             Map<Target, List<Handovers>> handovers) {

    Block(SessionMix load, int inFlight, int routers) {
        this(load, inFlight, routers, new EnumMap<>(Target.class), new EnumMap<>(Target.class),
                new EnumMap<>(Target.class), new EnumMap<>(Target.class));
    }

    /** One round's context switches: of the target's server processes and of redis-server, and the answers. */
    record Handovers(ContextSwitches servers, ContextSwitches redis, long answered) {
    }

    /** The context switches of one measured round of {@code t}. */
    void switched(Target t, ContextSwitches servers, ContextSwitches redis, long answered) {
        handovers.computeIfAbsent(t, x -> new ArrayList<>()).add(new Handovers(servers, redis, answered));
    }

    /**
     * Context switches per answer of {@code t}'s server processes ({@code redis} false) or of redis-server in
     * {@code t}'s rounds, voluntary or ({@code preempted}) involuntary; null when not measured.
     */
    Spread switchesPerAnswer(Target t, boolean redis, boolean preempted) {
        List<Double> v = handovers.getOrDefault(t, List.of()).stream()
                .map(h -> (redis ? h.redis() : h.servers()).perAnswer(h.answered(), preempted))
                .filter(x -> !x.isNaN()).toList();
        return v.isEmpty() ? null : Spread.of(v);
    }

    /** What the scheduler did in one traced round of {@code t} ({@code bench --sched-trace}). */
    void traced(Target t, SchedTrace.Waits w) {
        waits.computeIfAbsent(t, x -> new ArrayList<>()).add(w);
    }

    void warmedUp(Target t, ProcessBench.Warmup w) {
        warmups.put(t, w);
    }

    void add(Round r) {
        rounds.computeIfAbsent(r.target(), t -> new ArrayList<>()).add(r);
    }

    List<Round> of(Target t) {
        return rounds.getOrDefault(t, List.of());
    }

    Spread perSecond(Target t) {
        return Spread.of(of(t).stream().map(Round::perSecond).toList());
    }

    Spread p50(Target t) {
        return Spread.of(of(t).stream().map(Round::p50Millis).toList());
    }

    Spread p99(Target t) {
        return Spread.of(of(t).stream().map(Round::p99Millis).toList());
    }

    /** Throughput of {@code t} over the no-op's, round by round. */
    Spread throughputRatio(Target t) {
        return ratio(t, true);
    }

    /** p99 of {@code t} over the no-op's, round by round. */
    Spread p99Ratio(Target t) {
        return ratio(t, false);
    }

    private Spread ratio(Target t, boolean throughput) {
        List<Round> base = of(Target.NOOP);
        List<Round> mine = of(t);
        List<Double> r = new ArrayList<>();
        for (int i = 0; i < Math.min(base.size(), mine.size()); i++) {
            r.add(throughput ? mine.get(i).perSecond() / base.get(i).perSecond()
                    : mine.get(i).p99Millis() / base.get(i).p99Millis());
        }
        return Spread.of(r);
    }

    /** CPU of {@code t}'s server processes per answer, in microseconds; null when not measured. */
    Spread cpuPerAnswer(Target t) {
        List<Double> v = of(t).stream().map(Round::cpuMicrosPerAnswer).filter(x -> !x.isNaN()).toList();
        return v.isEmpty() ? null : Spread.of(v);
    }

    /** The JIT compilers' part of {@link #cpuPerAnswer}; null when not measured. */
    Spread jitPerAnswer(Target t) {
        List<Double> v = of(t).stream().map(Round::jitMicrosPerAnswer).filter(x -> !x.isNaN()).toList();
        return v.isEmpty() ? null : Spread.of(v);
    }

    /** CPU per answer of {@code t} over the no-op's, round by round; null when not measured. */
    Spread cpuRatio(Target t) {
        List<Round> base = of(Target.NOOP);
        List<Round> mine = of(t);
        List<Double> r = new ArrayList<>();
        for (int i = 0; i < Math.min(base.size(), mine.size()); i++) {
            double ratio = mine.get(i).cpuMicrosPerAnswer() / base.get(i).cpuMicrosPerAnswer();
            if (!Double.isNaN(ratio) && !Double.isInfinite(ratio)) {
                r.add(ratio);
            }
        }
        return r.isEmpty() ? null : Spread.of(r);
    }

    /** Busy share of the servers' core (or, with {@code client}, the client's) during {@code t}'s rounds. */
    Spread coreBusy(Target t, boolean client) {
        List<Double> v = of(t).stream()
                .map(r -> client ? r.cpu().clientCoreBusyShare() : r.cpu().serverCoreBusyShare())
                .filter(x -> !x.isNaN()).toList();
        return v.isEmpty() ? null : Spread.of(v);
    }

    /** The host's steal, % of the servers' core (or, with {@code client}, the client's), in {@code t}'s rounds. */
    Spread stealPercent(Target t, boolean client) {
        List<Double> v = of(t).stream().map(r -> 100 * r.cpu().stealShare(client)).filter(x -> !x.isNaN()).toList();
        return v.isEmpty() ? null : Spread.of(v);
    }

    /** The other servers' percent of the servers' core during the target's rounds ({@link CpuTimes#bystanderTicks}). */
    Spread bystanderPercent(Target t) {
        List<Double> v = of(t).stream().map(r -> 100 * r.cpu().bystanderShareOfServerCore()).filter(x -> !x.isNaN())
                .toList();
        return v.isEmpty() ? null : Spread.of(v);
    }

    long errors(Target t) {
        return of(t).stream().mapToLong(Round::errors).sum();
    }

    String title() {
        return load.title() + ", " + inFlight + " in flight, " + routers + (routers == 1 ? " router" : " routers");
    }
}
