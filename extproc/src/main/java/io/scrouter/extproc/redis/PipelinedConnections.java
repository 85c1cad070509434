package io.scrouter.extproc.redis;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.scrouter.extproc.config.RouterConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * One {@link PipelinedConnection} per event loop of the router, each opened when its loop first needs it: a new
 * session's {@code SET} goes out on the connection of the loop that read Envoy's request, and its reply is read
 * there, so the decision never changes threads. Only where one server holds every key and Redisson is not needed to
 * find it ({@code redis.mode: single}); {@link #forSettings} says which. The connections close with their loops
 * when the router stops.
 */
public final class PipelinedConnections {

    private final List<EventLoop> loops = new ArrayList<>();
    private final List<PipelinedConnection> connections = new ArrayList<>();

    private PipelinedConnections(EventLoopGroup group, RouterConfig.Redis settings) {
        for (EventExecutor e : group) {
            EventLoop loop = (EventLoop) e;
            loops.add(loop);
            connections.add(new PipelinedConnection(loop, settings.addresses().get(0), settings.password(),
                    settings.database(), settings.timeout().toMillis(), List.of(SessionScripts.FOLLOW_UP)));
        }
    }

    /**
     * The connections for a router's event loops, or null where the request path stays on Redisson: a Sentinel
     * deployment (the master's address is Redisson's to follow through a failover) and a Redis Cluster (a session's
     * key lives on the master of its slot).
     */
    public static PipelinedConnections forSettings(RouterConfig.Redis settings, EventLoopGroup group) {
        if (group == null || settings.mode() != RouterConfig.RedisMode.SINGLE) {
            return null;
        }
        return new PipelinedConnections(group, settings);
    }

    /** The connection of the loop running this call, or of {@code fallback}'s loop on any other thread. */
    PipelinedConnection current(EventLoop fallback) {
        for (int i = 0; i < loops.size(); i++) {
            if (loops.get(i).inEventLoop()) {
                return connections.get(i);
            }
        }
        return of(fallback);
    }

    /** The connection owned by {@code loop}, or null if it is not one of the router's loops. */
    PipelinedConnection of(EventLoop loop) {
        int i = loops.indexOf(loop);
        return i < 0 ? null : connections.get(i);
    }
}
