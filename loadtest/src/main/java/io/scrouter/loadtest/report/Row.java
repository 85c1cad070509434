package io.scrouter.loadtest.report;

import io.scrouter.loadtest.sim.SimResult;

import java.util.Arrays;
import java.util.List;

/**
 * One contender's figures on one scenario, pooled over the seeds it ran with: slowdown percentiles over
 * every measured query of every seed, the other figures averaged over seeds (failed and sent: summed).
 */
public record Row(String contender, double p50, double p95, double p99, double maxUtilisation,
                  double meanUtilisation, double minSessions, double maxSessions, long failedQueries,
                  long completedQueries, long sentQueries) {

    public static Row pool(String contender, List<SimResult> runs) {
        double[] all = runs.stream().flatMapToDouble(r -> Arrays.stream(r.slowdowns())).sorted().toArray();
        return new Row(contender, SimResult.quantile(all, 0.50), SimResult.quantile(all, 0.95),
                SimResult.quantile(all, 0.99),
                runs.stream().mapToDouble(SimResult::maxUtilisation).average().orElse(Double.NaN),
                runs.stream().mapToDouble(SimResult::meanUtilisation).average().orElse(Double.NaN),
                runs.stream().mapToInt(SimResult::minSessions).average().orElse(Double.NaN),
                runs.stream().mapToInt(SimResult::maxSessions).average().orElse(Double.NaN),
                runs.stream().mapToLong(SimResult::failedQueries).sum(),
                all.length,
                runs.stream().mapToLong(SimResult::sentQueries).sum());
    }
}
