package io.scrouter.loadtest.fault;

import io.scrouter.extproc.RouterServer;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.session.Binding;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Whether the routers and Redis agree: for each session, every router that holds it in its near-cache must
 * hold the same replica as Redis. After an outage this is what "reconverged" means.
 */
final class Agreement {

    /** Sessions where some router's binding differs from Redis (absent from Redis counts as different). */
    record Gap(long checked, long missingInRedis, long different) {
        long total() {
            return missingInRedis + different;
        }
    }

    private Agreement() {
    }

    static Gap check(List<RouterServer> routers, Collection<String> sessions, RedissonClient redis, RedisKeys keys) {
        long missing = 0;
        long different = 0;
        List<String> batch = new ArrayList<>(1000);
        long checked = 0;
        for (String s : sessions) {
            batch.add(s);
            if (batch.size() == 1000) {
                long[] r = checkBatch(routers, batch, redis, keys);
                missing += r[0];
                different += r[1];
                checked += batch.size();
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            long[] r = checkBatch(routers, batch, redis, keys);
            missing += r[0];
            different += r[1];
            checked += batch.size();
        }
        return new Gap(checked, missing, different);
    }

    private static long[] checkBatch(List<RouterServer> routers, List<String> sessions, RedissonClient redis,
                                     RedisKeys keys) {
        Map<String, String> stored = redis.getBuckets(StringCodec.INSTANCE)
                .get(sessions.stream().map(keys::session).toArray(String[]::new));
        long missing = 0;
        long different = 0;
        for (String s : sessions) {
            String inRedis = stored.get(keys.session(s));
            for (RouterServer rs : routers) {
                Optional<Binding> held = rs.routing().nearCache().binding(s);
                if (held.isEmpty() || held.get().lost()) {
                    continue;
                }
                if (inRedis == null) {
                    missing++;
                    break;
                }
                if (!Binding.decode(inRedis).replicaId().equals(held.get().replicaId())) {
                    different++;
                    break;
                }
            }
        }
        return new long[] {missing, different};
    }
}
