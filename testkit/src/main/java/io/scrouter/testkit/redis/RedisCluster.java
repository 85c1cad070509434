package io.scrouter.testkit.redis;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A real Redis Cluster on loopback: three masters sharing the 16384 slots in thirds, optionally with one
 * replica of the first master, every node a {@code redis-server --cluster-enabled yes} process with its own
 * data directory, persistence off, and a cluster-bus port chosen free ({@code cluster-port}: the default,
 * port + 10000, may not exist for a high free port).
 *
 * <p>The cluster is formed by hand ({@code CLUSTER SET-CONFIG-EPOCH}, {@code ADDSLOTSRANGE}, {@code MEET},
 * {@code REPLICATE}), as {@code redis-cli --cluster create} does it, so only {@code redis-server} is needed.
 * Nodes flag a silent peer after {@link #NODE_TIMEOUT}; tests derive their deadlines from it. Full slot
 * coverage is required (Redis's default), so while a master is down and not yet replaced the whole cluster
 * refuses commands, as it would in production. Everything it starts, it stops, also on a failed start.
 */
public final class RedisCluster implements AutoCloseable {

    public static final int SLOTS = 16384;
    /** {@code cluster-node-timeout}: a node unreachable this long is flagged failing by its peers. */
    public static final Duration NODE_TIMEOUT = Duration.ofMillis(1000);
    /** Forming the cluster (gossip converging) on a busy machine. */
    private static final Duration FORMED_WITHIN = Duration.ofSeconds(30);

    private final List<RedisProcess> masters = new ArrayList<>();
    private final List<Integer> busPorts = new ArrayList<>();
    private RedisProcess replica;
    private int replicaBusPort;

    private RedisCluster() {
    }

    /**
     * @param withReplica also start a replica of master 0, so that master can fail over
     */
    public static RedisCluster start(boolean withReplica) throws IOException, InterruptedException {
        RedisCluster cluster = new RedisCluster();
        try {
            cluster.form(withReplica);
            return cluster;
        } catch (IOException | RuntimeException | InterruptedException e) {
            cluster.close();
            throw e;
        }
    }

    private RedisProcess node(int busPort) throws IOException {
        return RedisProcess.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", Long.toString(NODE_TIMEOUT.toMillis()),
                "--cluster-port", Integer.toString(busPort),
                // A replica cut off from its master for a while may still take over: the test kills the master.
                "--cluster-replica-validity-factor", "0");
    }

    private void form(boolean withReplica) throws IOException, InterruptedException {
        for (int i = 0; i < 3; i++) {
            int bus = RedisProcess.freePort();
            masters.add(node(bus));
            busPorts.add(bus);
        }
        for (int i = 0; i < 3; i++) {
            RedisProcess m = masters.get(i);
            // Distinct epochs from the start, so no slot ownership has to be settled by an epoch collision.
            m.reply("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
            m.reply("CLUSTER", "ADDSLOTSRANGE", Integer.toString(firstSlot(i)), Integer.toString(firstSlot(i + 1) - 1));
        }
        for (int i = 1; i < 3; i++) {
            masters.get(0).reply("CLUSTER", "MEET", "127.0.0.1", Integer.toString(masters.get(i).port()),
                    Integer.toString(busPorts.get(i)));
        }
        List<RedisProcess> all = new ArrayList<>(masters);
        if (withReplica) {
            replicaBusPort = RedisProcess.freePort();
            replica = node(replicaBusPort);
            masters.get(0).reply("CLUSTER", "MEET", "127.0.0.1", Integer.toString(replica.port()),
                    Integer.toString(replicaBusPort));
            String masterId = String.valueOf(masters.get(0).reply("CLUSTER", "MYID"));
            awaitTrue("the replica to learn master 0 by gossip", () -> String.valueOf(replica.reply("CLUSTER", "NODES"))
                    .contains(masterId));
            replica.reply("CLUSTER", "REPLICATE", masterId);
            all.add(replica);
        }
        int total = all.size();
        awaitTrue("every node to see " + total + " nodes, all slots covered and state ok", () -> {
            for (RedisProcess n : all) {
                String info = String.valueOf(n.reply("CLUSTER", "INFO"));
                if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + total)
                        || !info.contains("cluster_slots_assigned:" + SLOTS)) {
                    return false;
                }
            }
            return true;
        });
        if (withReplica) {
            awaitTrue("the replica of master 0 to sync", () -> String.valueOf(replica.reply("INFO", "replication"))
                    .contains("master_link_status:up"));
        }
    }

    private static int firstSlot(int third) {
        return third == 3 ? SLOTS : third * (SLOTS / 3);
    }

    private interface Check {
        boolean holds() throws IOException;
    }

    private static void awaitTrue(String what, Check check) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + FORMED_WITHIN.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (check.holds()) {
                    return;
                }
            } catch (IOException e) {
                last = e;
            }
            Thread.sleep(50);
        }
        throw new IOException("cluster: timed out after " + FORMED_WITHIN.toSeconds() + " s waiting for " + what
                + (last == null ? "" : " (last error: " + last.getMessage() + ")"));
    }

    /** The masters' {@code redis://} addresses: a router's {@code redis.addresses} (seed nodes). */
    public List<String> seedAddresses() {
        return masters.stream().map(RedisProcess::address).toList();
    }

    public List<RedisProcess> masters() {
        return masters;
    }

    /** The replica of master 0, or null when started without one. */
    public RedisProcess replica() {
        return replica;
    }

    private List<RedisProcess> nodes() {
        List<RedisProcess> all = new ArrayList<>(masters);
        if (replica != null) {
            all.add(replica);
        }
        return all;
    }

    private RedisProcess anyLive() throws IOException {
        for (RedisProcess n : nodes()) {
            if (n.isAlive()) {
                return n;
            }
        }
        throw new IOException("no cluster node is alive");
    }

    /** The slot of a key, as the cluster computes it. */
    public int slot(String key) throws IOException {
        return ((Long) anyLive().reply("CLUSTER", "KEYSLOT", key)).intValue();
    }

    /** The current slot map as a live node reports it: first slot of each range → port of the master serving it. */
    private Map<Integer, Integer> ownerBySlotStart() throws IOException {
        Map<Integer, Integer> owners = new TreeMap<>();
        for (Object range : (List<?>) anyLive().reply("CLUSTER", "SLOTS")) {
            List<?> r = (List<?>) range;
            int port = ((Long) ((List<?>) r.get(2)).get(1)).intValue();
            owners.put(((Long) r.get(0)).intValue(), port);
        }
        return owners;
    }

    /** The node that serves a key now, as the live nodes' slot map says (it follows a failover). */
    public RedisProcess owner(String key) throws IOException {
        int slot = slot(key);
        int port = -1;
        for (Map.Entry<Integer, Integer> e : ownerBySlotStart().entrySet()) {
            if (e.getKey() <= slot) {
                port = e.getValue();
            }
        }
        for (RedisProcess n : nodes()) {
            if (n.port() == port) {
                return n;
            }
        }
        throw new IOException("no node of this cluster serves slot " + slot + " (slot map: " + ownerBySlotStart() + ")");
    }

    /** Runs a one-key command ({@code words[1]} is the key) on the node that serves the key. */
    public Object onOwner(String... words) throws IOException {
        return owner(words[1]).reply(words);
    }

    /**
     * Kills master 0 (SIGKILL) and waits until its replica is master of its slots and every live node
     * reports the cluster ok. Bounded by what Redis Cluster's failover needs at most, from
     * {@link #NODE_TIMEOUT}: failure detection (node timeout, then gossip to a majority), the replica's
     * election delay (up to 1 s), an election (retried after 2 × node timeout, at least 2 s, if the first
     * round is lost), plus {@code slack} for a busy machine.
     *
     * @return how long the failover took
     */
    public Duration killFirstMasterAndAwaitFailover(Duration slack) throws IOException, InterruptedException {
        if (replica == null) {
            throw new IllegalStateException("started without a replica: nothing can take over from master 0");
        }
        Duration election = NODE_TIMEOUT.multipliedBy(2).compareTo(Duration.ofSeconds(2)) > 0
                ? NODE_TIMEOUT.multipliedBy(2) : Duration.ofSeconds(2);
        Duration bound = NODE_TIMEOUT.multipliedBy(2).plus(Duration.ofSeconds(1)).plus(election.multipliedBy(2))
                .plus(slack);
        long start = System.nanoTime();
        masters.get(0).kill();
        long deadline = start + bound.toNanos();
        while (System.nanoTime() < deadline) {
            if (tookOver()) {
                return Duration.ofNanos(System.nanoTime() - start);
            }
            Thread.sleep(50);
        }
        throw new IOException("the replica did not take over master 0's slots within " + bound.toMillis()
                + " ms; logs in " + replica.dir() + " and the masters' folders");
    }

    private boolean tookOver() {
        try {
            if (!String.valueOf(replica.reply("ROLE")).startsWith("[master")) {
                return false;
            }
            for (RedisProcess n : nodes()) {
                if (n.isAlive() && !String.valueOf(n.reply("CLUSTER", "INFO")).contains("cluster_state:ok")) {
                    return false;
                }
            }
            return ownerBySlotStart().get(0) == replica.port();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (RedisProcess n : nodes()) {
            n.close();
        }
    }

    /** For messages: each node's port and role. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("RedisCluster[");
        for (int i = 0; i < masters.size(); i++) {
            sb.append("master").append(i).append('=').append(masters.get(i).port()).append(' ');
        }
        if (replica != null) {
            sb.append("replica=").append(replica.port());
        }
        return sb.append(']').toString();
    }
}
