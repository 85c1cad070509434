package io.scrouter.loadtest.workload;

import io.scrouter.loadtest.trace.TraceEvent;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Writes a workload down as a timed trace for the replay tools, which play events at fixed times: each
 * session's queries are spaced by its think times from one send to the next (open loop), since a trace
 * cannot wait for results. The users, query sizes and think times are the simulator's.
 */
public final class TraceRenderer {

    private TraceRenderer() {
    }

    public static List<TraceEvent> render(Workload workload) {
        long duration = workload.spec().durationMillis();
        List<TraceEvent> events = new ArrayList<>();
        for (Workload.Arrival a : workload.arrivals()) {
            SessionPlan plan = workload.session(a.index());
            long stop = Math.min(a.atMillis() + plan.lifetimeMillis(), duration);
            events.add(new TraceEvent.SessionStart(a.atMillis(), plan.id(), plan.router()));
            long at = a.atMillis() + 1 + plan.firstQueryDelayMillis();
            boolean first = true;
            while (at < stop) {
                SessionPlan.Query q = plan.nextQuery();
                events.add(new TraceEvent.Query(at, plan.id(), q.tasks(), q.taskMillis(),
                        rpcs(first, q.tasks() * q.taskMillis())));
                first = false;
                at += plan.nextThinkMillis();
            }
            events.add(new TraceEvent.SessionEnd(Math.max(stop, a.atMillis() + 1), plan.id()));
        }
        events.sort(Comparator.comparingLong(TraceEvent::atMillis).thenComparingInt(TraceRenderer::order));
        return events;
    }

    /** The RPCs a Spark Connect client sends for one query, as the JVM and Python clients do. */
    static List<String> rpcs(boolean first, long workMillis) {
        List<String> rpcs = new ArrayList<>(5);
        if (first) {
            rpcs.add("Config");
        }
        rpcs.add("AnalyzePlan");
        rpcs.add("ExecutePlan");
        if (workMillis > 5_000) {
            rpcs.add("ReattachExecute"); // long results are streamed in several reattached parts
        }
        rpcs.add("ReleaseExecute");
        return rpcs;
    }

    private static int order(TraceEvent e) {
        return e instanceof TraceEvent.SessionStart ? 0 : e instanceof TraceEvent.Query ? 1 : 2;
    }
}
