import io.grpc.*;
import io.scrouter.extproc.client.ExtProcClient;
import org.HdrHistogram.*;
import java.nio.file.*;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

/**
 * Alternates known-session load between ext_proc servers on loopback and reports, per measured part and as medians,
 * each server process's CPU per answer (utime + stime, /proc/PID/stat), its throughput, its p50 and p99 (headers
 * sent to answer received, HdrHistogram) and the host's steal on core 0. 32 streams in flight, one Process stream per
 * request, as the bench sends them. Run by ab.sh: {@code AbProbe name=port:pid,... warm n rounds [session]}.
 */
public class AbProbe {
    record T(String name, ExtProcClient c, long pid, List<double[]> rows) {}
    public static void main(String[] a) throws Exception {
        List<T> ts = new ArrayList<>();
        for (String spec : a[0].split(",")) {
            String[] nv = spec.split("=");
            String[] pp = nv[1].split(":");
            ManagedChannel ch = io.grpc.netty.NettyChannelBuilder.forAddress("127.0.0.1", Integer.parseInt(pp[0])).usePlaintext().directExecutor().build();
            ts.add(new T(nv[0], new ExtProcClient(ch, Duration.ofSeconds(5)), Long.parseLong(pp[1]), new ArrayList<>()));
        }
        int warm = Integer.parseInt(a[1]), n = Integer.parseInt(a[2]), rounds = Integer.parseInt(a[3]);
        String session = a.length > 4 ? a[4] : UUID.randomUUID().toString();
        for (T t : ts) run(t.c, warm, session, null);
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < ts.size(); k++) {
                T t = ts.get((k + r) % ts.size());
                run(t.c, n / 4, session, null); // lead-in
                Recorder rec = new Recorder(3);
                long cpu0 = cpu(t.pid); long[] st0 = steal(); long t0 = System.nanoTime();
                run(t.c, n, session, rec);
                long cpu1 = cpu(t.pid); long[] st1 = steal(); long t1 = System.nanoTime();
                Histogram h = rec.getIntervalHistogram();
                double stealPct = (st1[0] - st0[0]) * 100.0 / Math.max(1, st1[1] - st0[1]);
                double[] row = {(cpu1 - cpu0) * 10_000.0 / n, n / ((t1 - t0) / 1e9), h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, stealPct};
                t.rows.add(row);
                System.out.printf("r%d %-6s %6.2f us/req %7.0f req/s p50 %.3f p99 %.3f steal0 %.1f%%%n", r, t.name, row[0], row[1], row[2], row[3], row[4]);
            }
        }
        for (T t : ts) {
            if (t.rows.isEmpty()) {
                continue;
            }
            System.out.printf("%-6s cpu/req median %.2f min %.2f | p99 median %.3f | req/s median %.0f%n", t.name,
                med(t.rows, 0), t.rows.stream().mapToDouble(x -> x[0]).min().orElse(0), med(t.rows, 3), med(t.rows, 1));
        }
        System.exit(0);
    }
    static double med(List<double[]> rows, int i) { double[] v = rows.stream().mapToDouble(x -> x[i]).sorted().toArray(); return v[v.length / 2]; }
    static long[] steal() throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/stat"))) if (l.startsWith("cpu0 ")) {
            String[] f = l.trim().split("\\s+"); long tot = 0; for (int i = 1; i < f.length; i++) tot += Long.parseLong(f[i]);
            return new long[] {Long.parseLong(f[8]), tot};
        }
        return new long[] {0, 1};
    }
    static long cpu(long pid) throws Exception {
        String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
    static void run(ExtProcClient c, int n, String s, Recorder rec) throws Exception {
        AtomicInteger left = new AtomicInteger(n);
        CountDownLatch done = new CountDownLatch(32);
        for (int i = 0; i < 32; i++) loop(c, left, done, s, rec);
        if (!done.await(300, TimeUnit.SECONDS)) throw new IllegalStateException("stuck");
    }
    static void loop(ExtProcClient c, AtomicInteger left, CountDownLatch done, String s, Recorder rec) {
        if (left.decrementAndGet() < 0) { done.countDown(); return; }
        long t = System.nanoTime();
        c.sendAsync(ExtProcClient.sparkCall("ExecutePlan", s)).whenComplete((r, e) -> {
            if (e != null || !r.hasRequestHeaders()) { System.err.println("bad answer " + e + " " + r); System.exit(1); }
            if (rec != null) rec.recordValue(System.nanoTime() - t);
            loop(c, left, done, s, rec);
        });
    }
}
