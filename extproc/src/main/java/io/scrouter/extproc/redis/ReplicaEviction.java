package io.scrouter.extproc.redis;

import io.scrouter.extproc.session.Binding;
import org.redisson.api.RBatch;
import org.redisson.api.RScoredSortedSet;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.scrouter.extproc.redis.SessionScripts.MARK_LOST;

/**
 * Marks lost the sessions of a replica whose driver is gone ({@link RedisSessionStore#evictReplica}), reading the
 * replica's index a page of {@link RedisSessionStore#EVICTION_PAGE} sessions at a time.
 */
final class ReplicaEviction {

    private static final int PAGE = RedisSessionStore.EVICTION_PAGE;

    private final RedissonClient redis;
    private final RedisKeys keys;
    private final Duration lostTtl;

    ReplicaEviction(RedissonClient redis, RedisKeys keys, Duration lostTtl) {
        this.redis = redis;
        this.keys = keys;
        this.lostTtl = lostTtl;
    }

    /** @param replica the driver that is gone, as bound; sessions bound under its plain id are marked too */
    CompletableFuture<Long> evict(String replica) {
        return evictPage(replica, Binding.replicaIdOf(replica), 0, 0);
    }

    /**
     * Marks lost the sessions of one page of the replica's index, from rank {@code from}, drops those from the
     * index, then goes on with the next page. One page, not the whole index: every reply must arrive within the
     * Redis deadline, and a replica with a hundred thousand sessions has an index of megabytes. A page's marked
     * sessions leave the index, so the next page starts {@code from} plus those that stayed. Ranks that move under
     * concurrent writes (an expired member trimmed by a count) may let one pass miss a session; the next pass
     * ({@code LostDrivers} runs two) marks it.
     */
    private CompletableFuture<Long> evictPage(String replica, String replicaId, int from, long markedSoFar) {
        RScoredSortedSet<String> index = redis.getScoredSortedSet(keys.replicaSessions(replicaId),
                StringCodec.INSTANCE);
        return index.valueRangeAsync(from, from + PAGE - 1).toCompletableFuture().thenCompose(members -> {
            if (members.isEmpty()) {
                return CompletableFuture.completedFuture(markedSoFar);
            }
            // One pipelined batch per page rather than one call per session: a replica with thousands of sessions
            // must not take every pooled connection away from the request path.
            List<String> sessions = new ArrayList<>(members);
            String lostMillis = Long.toString(lostTtl.toMillis());
            RBatch batch = redis.createBatch();
            for (String sessionId : sessions) {
                String key = keys.session(sessionId);
                batch.getScript(StringCodec.INSTANCE).evalAsync(key, RScript.Mode.READ_WRITE, MARK_LOST,
                        RScript.ReturnType.LONG, List.of(key), replica, "", lostMillis, replicaId);
            }
            return batch.executeAsync().toCompletableFuture().thenCompose(result -> {
                List<String> marked = new ArrayList<>();
                List<?> responses = result.getResponses();
                for (int i = 0; i < responses.size(); i++) {
                    if (responses.get(i) instanceof Number n && n.longValue() == 1) {
                        marked.add(sessions.get(i));
                    }
                }
                // Only the driver's own sessions leave the count: the id may already serve a new driver's.
                CompletableFuture<?> unindexed = marked.isEmpty() ? CompletableFuture.completedFuture(null)
                        : index.removeAllAsync(marked).toCompletableFuture();
                long total = markedSoFar + marked.size();
                return unindexed.thenCompose(x -> sessions.size() < PAGE
                        ? CompletableFuture.completedFuture(total)
                        : evictPage(replica, replicaId, from + sessions.size() - marked.size(), total));
            });
        });
    }
}
