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
     * @return how long the promotion took
     */
    public Duration killMasterAndAwaitPromotion(Duration slack) throws IOException, InterruptedException {
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
        throw new IOException("sentinels did not promote the replica within " + bound.toMillis() + " ms; logs in "
                + sentinelDirs);
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
