package io.scrouter.loadtest.fault;

import io.scrouter.testkit.redis.RedisProcess;
import io.scrouter.testkit.redis.Resp;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Sentinel-managed Redis on loopback: a master, one replica and three sentinels (quorum 2, master declared
 * down after 1 s, failover timeout 5 s), all real {@code redis-server} processes with persistence off.
 * Everything it starts, it stops.
 */
final class SentinelGroup implements AutoCloseable {

    static final String MASTER_NAME = "mymaster";

    private final RedisProcess master;
    private final RedisProcess replica;
    private final List<Process> sentinels = new ArrayList<>();
    private final List<Integer> sentinelPorts = new ArrayList<>();

    SentinelGroup() throws Exception {
        this.master = RedisProcess.start();
        this.replica = RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(master.port()));
        try {
            for (int i = 0; i < 3; i++) {
                startSentinel();
            }
            awaitReady();
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    private void startSentinel() throws IOException, InterruptedException {
        int port = RedisProcess.freePort();
        Path dir = Files.createTempDirectory("sentinel");
        Path conf = dir.resolve("sentinel.conf");
        Files.writeString(conf, String.join("\n",
                "port " + port,
                "bind 127.0.0.1",
                "protected-mode no",
                "dir " + dir,
                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + master.port() + " 2",
                "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                "sentinel failover-timeout " + MASTER_NAME + " 5000",
                "sentinel parallel-syncs " + MASTER_NAME + " 1",
                ""));
        Process p = new ProcessBuilder("/usr/bin/redis-server", conf.toString(), "--sentinel")
                .redirectErrorStream(true).redirectOutput(dir.resolve("sentinel.log").toFile()).start();
        sentinels.add(p);
        sentinelPorts.add(port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
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
    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            boolean ok = String.valueOf(Resp.command(replica.port(), "INFO", "replication"))
                    .contains("master_link_status:up");
            for (int port : sentinelPorts) {
                try {
                    ok &= String.valueOf(Resp.command(port, "SENTINEL", "CKQUORUM", MASTER_NAME)).startsWith("OK 3");
                    ok &= !((List<?>) Resp.command(port, "SENTINEL", "REPLICAS", MASTER_NAME)).isEmpty();
                } catch (IOException notYet) {
                    ok = false;
                }
            }
            if (ok) {
                return;
            }
            Thread.sleep(200);
        }
        throw new IOException("sentinels did not agree on master, replica and quorum within 30 s");
    }

    List<String> sentinelAddresses() {
        return sentinelPorts.stream().map(p -> "redis://127.0.0.1:" + p).toList();
    }

    RedisProcess master() {
        return master;
    }

    RedisProcess replica() {
        return replica;
    }

    /** The master's port as the first sentinel reports it, or -1 if it cannot be asked. */
    int reportedMasterPort() {
        try {
            List<?> addr = (List<?>) Resp.command(sentinelPorts.get(0), "SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                    MASTER_NAME);
            return Integer.parseInt(String.valueOf(addr.get(1)));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    @Override
    public void close() throws Exception {
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
