package io.scrouter.extproc;

import io.scrouter.extproc.config.RouterConfig;
import io.scrouter.extproc.pool.InstanceStore;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.pool.StaticInstanceStore;
import io.scrouter.extproc.redis.PipelinedConnections;
import io.scrouter.extproc.redis.RedisBindingFeed;
import io.scrouter.extproc.redis.RedisClients;
import io.scrouter.extproc.redis.RedisInstanceStore;
import io.scrouter.extproc.redis.RedisKeys;
import io.scrouter.extproc.redis.RedisSessionStore;
import io.scrouter.extproc.runtime.IoLoops;
import io.scrouter.extproc.session.BindingFeed;
import io.scrouter.extproc.session.InMemorySessionStore;
import io.scrouter.extproc.session.ObservedSessionStore;
import io.scrouter.extproc.session.SessionStore;
import io.scrouter.extproc.session.SessionTtls;
import io.scrouter.extproc.session.StoreCallObserver;
import org.redisson.api.RedissonClient;

import java.util.function.LongSupplier;

/**
 * Where a router keeps sessions and finds replicas: in Redis when the configuration has a {@code redis} section
 * (shared by every router, with the other routers' new bindings as a feed), else the embedded default (sessions
 * in memory, the static pool of the configuration, no peers).
 *
 * @param redis the client to shut down with the router; null for the embedded default
 */
record Stores(RedissonClient redis, SessionStore sessions, InstanceStore instances, BindingFeed feed) {

    /**
     * @param io the network threads to share with the Redis client, or null to let it start its own
     */
    static Stores from(RouterConfig config, LongSupplier clock, StoreCallObserver observer, IoLoops io) {
        SessionTtls ttls = new SessionTtls(config.sessions().idleTtl(), config.sessions().lostTtl(),
                config.sessions().releaseGrace());
        if (config.redis().isPresent()) {
            RouterConfig.Redis r = config.redis().get();
            RedisKeys keys = new RedisKeys(r.keyPrefix());
            RedissonClient redis = RedisClients.create(r, io == null ? null : io.group());
            // On the shared event loop the writes that follow bindings go out together, gathered for
            // redis.followUpGather.
            // In single mode a new session's SET, and the follow-up batches with it, go out on one pipelined
            // connection per event loop (PipelinedConnection says why); everything else stays on Redisson.
            PipelinedConnections pipelined = io == null ? null : PipelinedConnections.forSettings(r, io.group());
            SessionStore sessions = io == null ? new RedisSessionStore(redis, keys, ttls, clock)
                    : pipelined == null
                    ? new RedisSessionStore(redis, keys, ttls, clock, io.group().next(), r.followUpGather())
                    : new RedisSessionStore(redis, keys, ttls, clock, io.group().next(), r.followUpGather(), pipelined);
            return new Stores(redis, new ObservedSessionStore(sessions, observer), new RedisInstanceStore(redis, keys),
                    new RedisBindingFeed(redis, keys));
        }
        return new Stores(null, new ObservedSessionStore(new InMemorySessionStore(ttls, clock), observer),
                new StaticInstanceStore(config.pool().staticReplicas().stream()
                        .map(s -> new Replica(s.id(), s.grpc(), s.metricsUrl(), s.state(), null, s.group())).toList()),
                BindingFeed.NONE);
    }
}
