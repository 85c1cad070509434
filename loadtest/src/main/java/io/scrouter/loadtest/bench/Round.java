package io.scrouter.loadtest.bench;

/**
 * One measured round of one target: its figures, for the Redis-backed router what Redis executed meanwhile (null
 * for the other targets), for a router its own account of the round ({@link RouterView#NONE} for the no-op), and
 * the CPU its server processes and both cores spent meanwhile.
 */
record Round(Target target, int index, double perSecond, double p50Millis, double p99Millis, long answered, long errors,
             long[] perServer, RedisCommandStats redis, double loadAverage, java.util.Map<String, Long> errorReasons,
             RouterView router, CpuTimes cpu) {

    static Round of(Target target, int index, InFlightLoad.Figures f, RedisCommandStats redis, double loadAverage,
                    RouterView router, CpuTimes cpu) {
        return new Round(target, index, f.perSecond(), f.p50Millis(), f.p99Millis(), f.answered(), f.errors(),
                f.perServer(), redis, loadAverage, f.errorReasons(), router, cpu);
    }

    /** CPU of the target's server processes per answer, in microseconds; NaN when not measured. */
    double cpuMicrosPerAnswer() {
        return cpu.microsPerAnswer(answered);
    }

    /** The part of {@link #cpuMicrosPerAnswer} spent by the JIT compiler threads; NaN when not measured. */
    double jitMicrosPerAnswer() {
        return cpu.jitMicrosPerAnswer(answered);
    }
}
