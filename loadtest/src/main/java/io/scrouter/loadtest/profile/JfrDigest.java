package io.scrouter.loadtest.profile;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a JFR recording of the router says about the request path: CPU samples as folded stacks (for the flame
 * graph) and by library, samples that pass through given methods, samples per thread group, garbage-collection
 * pauses, and sampled allocation by site. Read with the JDK's own {@code jdk.jfr.consumer} API.
 *
 * <p>Allocation: a {@code jdk.ObjectAllocationSample}'s weight is what its thread allocated since the thread's
 * previous sample, and a thread's first sample in a recording started on a running JVM ({@code jcmd JFR.start})
 * has no previous one in it: its weight is what the thread allocated before, from its start or an earlier
 * recording's last sample on. For the request path's event loop after a warm-up that is gigabytes in one sample,
 * charged to whatever site it happened to land on. Each thread's first sample is therefore left out of the
 * figures and counted apart ({@link #leftOutBytes()}).
 *
 * <p>Library attribution: a sample is charged to the library of its innermost frame that is not the JDK's
 * ({@code java.*}, {@code jdk.*}, {@code sun.*}), so time in {@code HashMap.get} called by Caffeine counts as
 * Caffeine's. A stack of JDK frames only is charged to the JDK.
 */
public final class JfrDigest {

    /** Libraries by package prefix, in the order they are tested. */
    private static final String[][] LIBRARIES = {
            {"io.scrouter.", "router (io.scrouter)"},
            {"org.redisson.", "Redisson"},
            {"io.grpc.", "gRPC"},
            {"io.netty.", "Netty"},
            {"com.google.protobuf.", "protobuf"},
            {"io.envoyproxy.", "protobuf"},
            {"com.github.benmanes.caffeine.", "Caffeine"},
            {"io.prometheus.", "Prometheus metrics"},
            {"ch.qos.logback.", "logging"},
            {"org.slf4j.", "logging"},
            {"com.fasterxml.jackson.", "Jackson"},
            {"java.", null},
            {"jdk.", null},
            {"sun.", null},
            {"javax.", null},
    };

    private final Map<String, Long> folded = new HashMap<>();
    private final Map<String, String> libraries = new HashMap<>();
    private final Map<String, Long> byLibrary = new HashMap<>();
    private final Map<String, Long> byThreadGroup = new HashMap<>();
    private final Map<String, Long> through = new HashMap<>();
    private final Map<String, Map<String, Long>> throughByThread = new HashMap<>();
    private final Map<String, Long> allocationBySite = new HashMap<>();
    private final List<Duration> gcPauses = new ArrayList<>();
    private final List<String> markers;
    private final List<Allocation> allocations = new ArrayList<>();
    private long samples;
    private long allocatedBytes;
    private long leftOutSamples;
    private long leftOutBytes;

    /** One allocation sample, kept until the recording is read so that each thread's first can be told. */
    private record Allocation(long threadId, Instant at, long weight, String site) {
    }

    private JfrDigest(List<String> markers) {
        this.markers = List.copyOf(markers);
    }

    /**
     * Reads a recording; {@code markers} are {@code Class.method} names (simple class name) whose inclusive
     * sample counts are wanted.
     */
    public static JfrDigest read(Path recording, List<String> markers) throws IOException {
        JfrDigest d = new JfrDigest(markers);
        try (RecordingFile file = new RecordingFile(recording)) {
            while (file.hasMoreEvents()) {
                d.accept(file.readEvent());
            }
        }
        d.tallyAllocations();
        return d;
    }

    private void accept(RecordedEvent e) {
        switch (e.getEventType().getName()) {
            case "jdk.ExecutionSample" -> sample(e);
            case "jdk.GarbageCollection" -> gcPauses.add(e.getDuration("sumOfPauses"));
            case "jdk.ObjectAllocationSample" -> allocation(e);
            default -> {
                // not used
            }
        }
    }

    private void sample(RecordedEvent e) {
        RecordedStackTrace st = e.getStackTrace();
        if (st == null) {
            return;
        }
        RecordedThread t = e.getThread("sampledThread");
        String group = ThreadTimes.group(t == null || t.getJavaName() == null ? "?" : t.getJavaName());
        samples++;
        byThreadGroup.merge(group, 1L, Long::sum);
        List<RecordedFrame> frames = st.getFrames(); // leaf first
        String library = "JDK";
        for (RecordedFrame f : frames) {
            String lib = library(f.getMethod().getType().getName());
            if (lib != null) {
                library = lib;
                break;
            }
        }
        byLibrary.merge(library, 1L, Long::sum);
        StringBuilder stack = new StringBuilder(group);
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = frames.size() - 1; i >= 0; i--) {
            RecordedFrame frame = frames.get(i);
            String name = name(frame);
            libraries.computeIfAbsent(name, k -> {
                String lib = library(frame.getMethod().getType().getName());
                return lib == null ? "JDK" : lib;
            });
            stack.append(';').append(name);
            seen.add(name);
        }
        if (st.isTruncated()) {
            stack.insert(group.length(), ";[truncated]");
        }
        folded.merge(stack.toString(), 1L, Long::sum);
        for (String m : markers) {
            if (seen.contains(m)) {
                through.merge(m, 1L, Long::sum);
                throughByThread.computeIfAbsent(m, k -> new HashMap<>()).merge(group, 1L, Long::sum);
            }
        }
    }

    private void allocation(RecordedEvent e) {
        long weight = e.getLong("weight");
        RecordedThread thread = e.getThread("eventThread");
        RecordedStackTrace st = e.getStackTrace();
        String site = "?";
        if (st != null) {
            for (RecordedFrame f : st.getFrames()) {
                if (library(f.getMethod().getType().getName()) != null) {
                    site = name(f);
                    break;
                }
            }
        }
        String type = e.getClass("objectClass") == null ? "?" : simple(e.getClass("objectClass").getName());
        allocations.add(new Allocation(thread == null ? -1 : thread.getId(), e.getStartTime(), weight,
                site + " (" + type + ")"));
    }

    /** Every thread's samples in time order, the first of each left out (see the class comment). */
    private void tallyAllocations() {
        allocations.sort(Comparator.comparing(Allocation::at));
        Set<Long> seen = new HashSet<>();
        for (Allocation a : allocations) {
            if (seen.add(a.threadId())) {
                leftOutSamples++;
                leftOutBytes += a.weight();
                continue;
            }
            allocatedBytes += a.weight();
            allocationBySite.merge(a.site(), a.weight(), Long::sum);
        }
        allocations.clear();
    }

    /** The library of a class, or null for the JDK's own classes. */
    static String library(String className) {
        for (String[] l : LIBRARIES) {
            if (className.startsWith(l[0])) {
                return l[1];
            }
        }
        return "other";
    }

    /** {@code SimpleClass.method}, with lambda and hidden-class suffixes removed so that runs compare. */
    static String name(RecordedFrame f) {
        return simple(f.getMethod().getType().getName()) + "." + f.getMethod().getName();
    }

    static String simple(String className) {
        String c = className;
        // A lambda's hidden class is named like Owner$$Lambda$679+0x00007fd8f94c5630.2028427430 (JDK 17) or
        // Owner$$Lambda$679/0x0000000800d3c000: keep Owner$$Lambda, whose dots belong to the owner's package.
        int lambda = c.indexOf("$$Lambda");
        if (lambda >= 0) {
            c = c.substring(0, lambda) + "$$Lambda";
        }
        int hidden = c.indexOf("/0x");
        if (hidden >= 0) {
            c = c.substring(0, hidden);
        }
        return c.substring(c.lastIndexOf('.') + 1);
    }

    /** The library of a frame name as written in {@link #folded()}. */
    public String libraryOf(String frameName) {
        return libraries.getOrDefault(frameName, "JDK");
    }

    public long samples() {
        return samples;
    }

    public Map<String, Long> folded() {
        return folded;
    }

    public Map<String, Long> byLibrary() {
        return byLibrary;
    }

    public Map<String, Long> byThreadGroup() {
        return byThreadGroup;
    }

    /** Samples whose stack contains the marker method. */
    public long through(String marker) {
        return through.getOrDefault(marker, 0L);
    }

    /** Samples whose stack contains the marker method, per thread group. */
    public Map<String, Long> throughByThread(String marker) {
        return throughByThread.getOrDefault(marker, Map.of());
    }

    public List<Duration> gcPauses() {
        return gcPauses;
    }

    /** Estimated bytes allocated during the recording (sum of the samples' weights, first ones left out). */
    public long allocatedBytes() {
        return allocatedBytes;
    }

    /** Threads whose first allocation sample was left out: one each. */
    public long leftOutSamples() {
        return leftOutSamples;
    }

    /** The weight of the samples left out: allocation from before the recording, as far as the samples say. */
    public long leftOutBytes() {
        return leftOutBytes;
    }

    public Map<String, Long> allocationBySite() {
        return allocationBySite;
    }
}
