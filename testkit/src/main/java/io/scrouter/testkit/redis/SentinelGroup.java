package io.scrouter.testkit.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Sentinel-managed Redis on loopback, as operators run one: a master, one replica and three sentinels
 * (quorum 2), all real {@code redis-server} processes (sentinels via {@code redis-server --sentinel}, which
 * is what the Debian package's {@code redis-sentinel} runs), persistence off.
 *
 * <p>The sentinels declare the master down after {@link #DOWN_AFTER} and give a failover
 * {@link #FAILOVER_TIMEOUT}; tests derive their deadlines from these. The constructor returns once the
 * replica is in sync and every sentinel sees the quorum and the replica, so a failover can start at once.
 * Everything it starts, it stops, also when starting fails half-way.
 */
public final class SentinelGroup implements AutoCloseable {

    public static final String MASTER_NAME = "scrouter";
    /** How long the master must be unreachable before a sentinel flags it down. */
    public static final Duration DOWN_AFTER = Duration.ofMillis(1000);
    /** Sentinel's bound on one failover attempt (and the wait before another sentinel retries it). */
    public static final Duration FAILOVER_TIMEOUT = Duration.ofMillis(5000);
    /** Sentinel's tilt period where {@code SENTINEL DEBUG} cannot report it ({@code SENTINEL_TILT_PERIOD}). */
    private static final Duration DEFAULT_TILT_PERIOD = Duration.ofSeconds(30);
    /** Set-up (sync, sentinels discovering each other by hello messages every 2 s) on a busy machine. */
    private static final Duration READY_WITHIN = Duration.ofSeconds(30);

    private final RedisProcess master;
    private final RedisProcess replica;
    private final List<Process> sentinels = new ArrayList<>();
    private final List<Integer> sentinelPorts = new ArrayList<>();
    private final List<Path> sentinelDirs = new ArrayList<>();

    private SentinelGroup(RedisProcess master, RedisProcess replica) {
        this.master = master;
        this.replica = replica;
    }

    public static SentinelGroup start() throws IOException, InterruptedException {
        RedisProcess master = RedisProcess.start();
        RedisProcess replica;
        try {
            replica = RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
        } catch (IOException | RuntimeException e) {
            master.close();
            throw e;
        }
        SentinelGroup group = new SentinelGroup(master, replica);
        try {
            for (int i = 0; i < 3; i++) {
                group.startSentinel();
            }
            group.awaitReady();
            return group;
        } catch (IOException | RuntimeException | InterruptedException e) {
            group.close();
            throw e;
        }
    }

    private void startSentinel() throws IOException, InterruptedException {
        int port = RedisProcess.freePort();
        Path dir = Files.createTempDirectory("sentinel");
        Path conf = dir.resolve("sentinel.conf");
        // Sentinel rewrites its own file (it records peers and the current master), so each gets its own.
        Files.writeString(conf, String.join("\n",
                "port " + port,
                "bind 127.0.0.1",
                "protected-mode no",
                "dir " + dir,
                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 2",
                "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER.toMillis(),
                "sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT.toMillis(),
                "sentinel parallel-syncs " + MASTER_NAME + " 1",
                ""));
        Process p = new ProcessBuilder(RedisProcess.binary(), conf.toString(), "--sentinel")
                .redirectErrorStream(true).redirectOutput(dir.resolve("sentinel.log").toFile()).start();
        sentinels.add(p);
        sentinelPorts.add(port);
        sentinelDirs.add(dir);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException("sentinel exited at start: " + Files.readString(dir.resolve("sentinel.log")));
            }
            try {
                if ("PONG".equals(Resp.command(port, "PING"))) {
                    return;
                }
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IOException("sentinel on port " + port + " did not answer within 10 s; log in " + dir);
    }

    /** Waits (bounded) until the replica is in sync and every sentinel knows the others and the replica. */
    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + READY_WITHIN.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            boolean ok = String.valueOf(replica.reply("INFO", "replication")).contains("master_link_status:up");
            last = ok ? "" : "replica not in sync";
            for (int port : sentinelPorts) {
                try {
                    String quorum = String.valueOf(Resp.command(port, "SENTINEL", "CKQUORUM", MASTER_NAME));
                    boolean replicaKnown = !((List<?>) Resp.command(port, "SENTINEL", "REPLICAS", MASTER_NAME))
                            .isEmpty();
                    if (!quorum.startsWith("OK 3") || !replicaKnown) {
                        ok = false;
                        last = "sentinel " + port + ": " + quorum + ", replica known: " + replicaKnown;
                    }
                } catch (IOException notYet) {
                    ok = false;
                    last = "sentinel " + port + ": " + notYet.getMessage();
                }
            }
            if (ok) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException("sentinels did not agree on master, replica and quorum within " + READY_WITHIN.toSeconds()
                + " s (" + last + "); logs in " + sentinelDirs);
    }

    /** {@code redis://127.0.0.1:port} of each sentinel, as a router's {@code redis.addresses} lists them. */
    public List<String> sentinelAddresses() {
        return sentinelPorts.stream().map(p -> "redis://127.0.0.1:" + p).toList();
    }

    public RedisProcess master() {
        return master;
    }

    public RedisProcess replica() {
        return replica;
    }

    /**
     * Sets how long every sentinel waits before flagging the master or the replica down (the group starts
     * with {@link #DOWN_AFTER}; Sentinel's own default is 30 s). A test raises it so that a hang it injects is
     * not masked by the sentinels taking the hung server out of service.
     */
    public void downAfter(Duration downAfter) throws IOException {
        for (int port : sentinelPorts) {
            Resp.command(port, "SENTINEL", "SET", MASTER_NAME, "down-after-milliseconds",
                    Long.toString(downAfter.toMillis()));
        }
    }

    /** Waits until the replica acknowledged every write the master accepted so far (WAIT 1). */
    public void awaitReplicated() throws IOException {
        Object acked = master.reply("WAIT", "1", Long.toString(READY_WITHIN.toMillis()));
        if (!(acked instanceof Long n) || n < 1) {
            throw new IOException("the replica did not acknowledge the master's writes within "
                    + READY_WITHIN.toSeconds() + " s (WAIT answered " + acked + ")");
        }
    }

    /** The master's port as every sentinel reports it, or -1 while they disagree or cannot be asked. */
    public int reportedMasterPort() {
        int agreed = -1;
        for (int port : sentinelPorts) {
            try {
                List<?> addr = (List<?>) Resp.command(port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                int reported = Integer.parseInt(String.valueOf(addr.get(1)));
                if (agreed != -1 && agreed != reported) {
                    return -1;
                }
                agreed = reported;
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }
        return agreed;
    }

    /**
     * Kills the master (SIGKILL) and waits until every sentinel names the replica as master and the replica
     * itself reports the master role. Bounded by {@link #DOWN_AFTER} plus two {@link #FAILOVER_TIMEOUT}s (a
     * first attempt may time out and be retried) plus {@code slack}, for a busy machine.
     *
     * <p>The master is killed only once no sentinel is in TILT mode. A sentinel whose own timer stalled for longer
     * than its tilt trigger (2 s: the whole machine stopped, as a shared CI host sometimes does) acts on nothing for
     * its tilt period (30 s), not even a master that is down ({@code sentinelCheckTiltCondition} and
     * {@code sentinelHandleDictOfRedisInstances} in Redis's {@code src/sentinel.c}). A master killed meanwhile is
     * failed over only after the tilt, and by then the replica has been cut off from it for longer than Sentinel
     * accepts of a replica it promotes (ten times {@code down-after-milliseconds}, {@code sentinelSelectSlave}):
     * the failover aborts ("-failover-abort-no-good-slave") and the group stays without a master.
     *
     * @return how long the promotion took, from the kill
     */
    public Duration killMasterAndAwaitPromotion(Duration slack) throws IOException, InterruptedException {
        awaitNoTilt(slack);
        long start = System.nanoTime();
        master.kill();
        Duration bound = DOWN_AFTER.plus(FAILOVER_TIMEOUT.multipliedBy(2)).plus(slack);
        long deadline = start + bound.toNanos();
        while (System.nanoTime() < deadline) {
            if (reportedMasterPort() == replica.port()
                    && String.valueOf(replica.reply("ROLE")).startsWith("[master")) {
                return Duration.ofNanos(System.nanoTime() - start);
            }
            Thread.sleep(50);
        }
        int tilted = sentinelsInTilt();
        throw new IOException("sentinels did not promote the replica within " + bound.toMillis() + " ms"
                + (tilted == 0 ? "" : " (" + tilted + " sentinels in TILT mode now: the machine stalled for over "
                        + "their tilt trigger)")
                + "; logs in " + sentinelDirs);
    }

    /**
     * Waits, bounded by two tilt periods and {@code slack}, until no sentinel is in TILT mode: before a fault that
     * the sentinels must act on ({@link #killMasterAndAwaitPromotion} says why).
     */
    public void awaitNoTilt(Duration slack) throws IOException, InterruptedException {
        Duration bound = tiltPeriod().multipliedBy(2).plus(slack);
        long deadline = System.nanoTime() + bound.toNanos();
        while (sentinelsInTilt() > 0) {
            if (System.nanoTime() > deadline) {
                throw new IOException("sentinels stayed in TILT mode for over " + bound.toSeconds()
                        + " s: the machine keeps stalling; logs in " + sentinelDirs);
            }
            Thread.sleep(50);
        }
    }

    /** How many sentinels report TILT mode now. */
    int sentinelsInTilt() throws IOException {
        int n = 0;
        for (int port : sentinelPorts) {
            if ("1".equals(infoField(String.valueOf(Resp.command(port, "INFO", "sentinel")), "sentinel_tilt"))) {
                n++;
            }
        }
        return n;
    }

    /**
     * The sentinels' tilt period, as {@code SENTINEL DEBUG} reports it (Redis 7.0 and later); Sentinel's fixed 30 s
     * ({@code SENTINEL_TILT_PERIOD}) where the command is unknown.
     */
    Duration tiltPeriod() throws IOException {
        List<?> params;
        try {
            params = (List<?>) Resp.command(sentinelPorts.get(0), "SENTINEL", "DEBUG");
        } catch (Resp.RespError olderThan7) {
            return DEFAULT_TILT_PERIOD;
        }
        for (int i = 0; i + 1 < params.size(); i += 2) {
            if ("TILT-PERIOD".equalsIgnoreCase(String.valueOf(params.get(i)))) {
                return Duration.ofMillis(Long.parseLong(String.valueOf(params.get(i + 1))));
            }
        }
        return DEFAULT_TILT_PERIOD;
    }

    /**
     * Sets one of Sentinel's timing parameters on every sentinel ({@code SENTINEL DEBUG name value}, Redis 7.0 and
     * later), for a test that must make a sentinel enter or leave TILT mode.
     */
    public void debugTiming(String name, Duration value) throws IOException {
        for (int port : sentinelPorts) {
            Resp.command(port, "SENTINEL", "DEBUG", name, Long.toString(value.toMillis()));
        }
    }

    /** One field of an {@code INFO} reply; null where the server does not report it. */
    private static String infoField(String info, String name) {
        for (String line : info.split("\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        return null;
    }

    @Override
    public void close() throws InterruptedException {
        for (Process p : sentinels) {
            p.destroy();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        replica.close();
        master.close();
    }
}
