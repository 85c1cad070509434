package io.scrouter.loadtest.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Calls per command as {@code INFO commandstats} counts them, and Redis's own CPU time ({@code INFO cpu}): taken
 * before and after a round, the difference divided by the requests answered gives the Redis commands (round
 * trips, for one-command calls) each request cost, and what Redis spent on them. Read with {@code redis-cli},
 * which comes with {@code redis-server}.
 */
record RedisCommandStats(Map<String, Long> calls, Map<String, Long> micros, double cpuSeconds) {

    /**
     * Commands that, outside Redis Cluster, only the router's Lua scripts run ({@code RedisSessionStore}: GET and
     * PEXPIRE; {@code FollowUpWrites}: ZADD, PUBLISH and XADD). Redis counts a script's own calls in
     * {@code commandstats} as well as the EVALSHA, so these are not round trips; the router also sends a GET of its
     * own once per pool poll (the epoch marker), which this cannot tell apart and which is background. SET is sent
     * as itself to bind a new session (SET NX PX); a script's SET (a binding revived or claimed, or a key gone
     * between the SET NX and the find-or-bind script) is rare and counted as sent.
     */
    static final java.util.Set<String> RUN_BY_SCRIPTS = java.util.Set.of("get", "pexpire", "zadd", "publish", "xadd");

    static RedisCommandStats read(int port) throws IOException, InterruptedException {
        return parse(redisCli(port, "INFO", "commandstats") + "\n" + redisCli(port, "INFO", "cpu"));
    }

    /** Parses {@code INFO commandstats} and {@code INFO cpu} text. */
    static RedisCommandStats parse(String info) {
        Map<String, Long> calls = new TreeMap<>();
        Map<String, Long> micros = new TreeMap<>();
        double cpu = 0;
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                int colon = line.indexOf(':');
                String name = line.substring("cmdstat_".length(), colon);
                for (String field : line.substring(colon + 1).split(",")) {
                    String[] kv = field.split("=", 2);
                    if (kv[0].equals("calls")) {
                        calls.put(name, Long.parseLong(kv[1]));
                    } else if (kv[0].equals("usec")) {
                        micros.put(name, Long.parseLong(kv[1]));
                    }
                }
            } else if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return new RedisCommandStats(calls, micros, cpu);
    }

    /** What happened between {@code before} and this reading; commands not called in between are left out. */
    RedisCommandStats since(RedisCommandStats before) {
        Map<String, Long> c = new TreeMap<>();
        Map<String, Long> u = new TreeMap<>();
        calls.forEach((name, n) -> {
            long d = n - before.calls.getOrDefault(name, 0L);
            if (d > 0) {
                c.put(name, d);
                u.put(name, micros.getOrDefault(name, 0L) - before.micros.getOrDefault(name, 0L));
            }
        });
        return new RedisCommandStats(c, u, cpuSeconds - before.cpuSeconds);
    }

    long totalCalls() {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Calls minus those {@link #RUN_BY_SCRIPTS}: what clients sent. */
    long sentCalls() {
        return calls.entrySet().stream().filter(e -> !RUN_BY_SCRIPTS.contains(e.getKey()))
                .mapToLong(Map.Entry::getValue).sum();
    }

    private static String redisCli(int port, String... words) throws IOException, InterruptedException {
        String[] cmd = new String[words.length + 3];
        cmd[0] = "redis-cli";
        cmd[1] = "-p";
        cmd[2] = Integer.toString(port);
        System.arraycopy(words, 0, cmd, 3, words.length);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("redis-cli " + String.join(" ", words) + " failed: "
                    + new String(out, StandardCharsets.UTF_8));
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
