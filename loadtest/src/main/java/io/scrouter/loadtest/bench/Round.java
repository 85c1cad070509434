package io.scrouter.loadtest.bench;

/**
 * One measured round of one target: its figures, and for the Redis-backed router what Redis executed meanwhile
 * (null for the other targets).
 */
record Round(Target target, int index, double perSecond, double p50Millis, double p99Millis, long answered, long errors,
             long[] perServer, RedisCommandStats redis, double loadAverage, java.util.Map<String, Long> errorReasons) {

    static Round of(Target target, int index, InFlightLoad.Figures f, RedisCommandStats redis, double loadAverage) {
        return new Round(target, index, f.perSecond(), f.p50Millis(), f.p99Millis(), f.answered(), f.errors(),
                f.perServer(), redis, loadAverage, f.errorReasons());
    }
}
