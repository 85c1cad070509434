package io.scrouter.extproc.routing;

import io.scrouter.extproc.pool.PoolSnapshot;
import io.scrouter.extproc.pool.Replica;
import io.scrouter.extproc.routing.ReplicaGroups.Access;
import io.scrouter.extproc.runtime.TimeSource;
import io.scrouter.scorer.Candidate;
import io.scrouter.scorer.Placement;
import io.scrouter.scorer.load.LoadBoard;
import io.scrouter.scorer.load.ReplicaLoad;
import io.scrouter.scorer.policy.Placer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Where a new session would go: by the placement policy over the ready replicas' load, or by rendezvous hashing
 * when routers must agree without the store (an outage, or just after one). Computing a proposal has no side
 * effect; the caller says when one was taken ({@link #taken}).
 */
public final class PlacementProposer {

    private static final Logger LOG = LoggerFactory.getLogger(PlacementProposer.class);

    private final Placer placer;
    private final LoadBoard board;
    private final SessionCounts counts;
    private final TimeSource time;
    private final Supplier<RandomGenerator> random;
    private final ReplicaGroups groups;
    private volatile boolean degraded;

    /** Where a new session would be placed, and how that choice was made. */
    record Proposal(Replica replica, Decision.Outcome outcome) {
    }

    /**
     * @param random the policy's randomness (ties, sampling); thread-local in production, seeded in tests
     */
    PlacementProposer(Placer placer, LoadBoard board, SessionCounts counts, TimeSource time,
                      Supplier<RandomGenerator> random, ReplicaGroups groups) {
        this.groups = groups;
        this.placer = placer;
        this.board = board;
        this.counts = counts;
        this.time = time;
        this.random = random;
    }

    /**
     * The replica a new session would get: from the first of the request's allowed groups with a ready replica
     * below its group's cap (a group is skipped when all its ready replicas are full); by rendezvous when
     * {@code mustAgree} (routers must choose alike without the store; caps are not applied then, as counts
     * differ a little between routers), by the placement policy otherwise. Null when no allowed replica takes
     * a new session ({@link #nothingToPropose} says why).
     */
    Proposal propose(String session, PoolSnapshot snapshot, boolean mustAgree, Access access) {
        return groups.placeInOrder(access, snapshot.ready(), r -> counts.get(r.id()), mustAgree,
                open -> proposeAmong(session, open, snapshot, mustAgree));
    }

    private Proposal proposeAmong(String session, List<Replica> ready, PoolSnapshot snapshot, boolean mustAgree) {
        if (ready.isEmpty()) {
            return null;
        }
        if (mustAgree) {
            return new Proposal(rendezvous(session, ready), Decision.Outcome.FALLBACK);
        }
        Optional<Placement> placement = placer.place(candidates(ready), random.get());
        if (placement.isEmpty()) {
            return null;
        }
        Replica r = snapshot.get(placement.get().replicaId());
        return new Proposal(r, placement.get().degraded() ? Decision.Outcome.PLACED_DEGRADED
                : Decision.Outcome.PLACED);
    }

    /**
     * Why {@link #propose} found nothing: every allowed ready replica is at its cap (the request may retry
     * later), or no allowed replica is ready at all.
     */
    Decision.Reject nothingToPropose(PoolSnapshot snapshot, Access access) {
        if (access.order() != null) {
            for (Replica r : snapshot.ready()) {
                if (access.allows(r)) {
                    groups.noteFull(access.requestGroup());
                    return GroupRejections.full(access.requestGroup(), access.order());
                }
            }
        }
        return Rejections.noReadyReplica(snapshot.size());
    }

    /**
     * Rendezvous hashing over the ready replicas that are not known dead: a replica whose last
     * {@link #DEAD_AFTER_FAILED_PROBES} probes all failed gets no new session, whatever the store's health. If every
     * ready replica is, the metrics side is down, not Spark, and all ready ones count.
     *
     * <p>Why several failures and not one: routers probe on their own, and a single slow answer on a busy host
     * fails one router's probe and not another's. Routers that then disagree on the set place the same new
     * session on different replicas, and its second request, reaching the other router, loses the session's work.
     * A dead replica fails every router's probes; routers then differ only for the probe interval in which they
     * reach the count, and only for new sessions.
     */
    Replica rendezvous(String session, List<Replica> ready) {
        List<Replica> alive = new ArrayList<>(ready.size());
        for (Replica r : ready) {
            if (board.get(r.id()).consecutiveFailures() < DEAD_AFTER_FAILED_PROBES) {
                alive.add(r);
            }
        }
        return Rendezvous.pick(session, alive.isEmpty() ? ready : alive);
    }

    /** Consecutive failed probes after which rendezvous treats a replica as dead (see {@link #rendezvous}). */
    static final int DEAD_AFTER_FAILED_PROBES = 3;

    /** A proposal became a binding: the replica's load and count see it before the next probe. */
    void taken(Proposal proposal) {
        String id = proposal.replica().id();
        board.notePlacement(id);
        counts.noteBound(id);
        if (proposal.outcome() != Decision.Outcome.FALLBACK) {
            noteDegraded(proposal.outcome() == Decision.Outcome.PLACED_DEGRADED);
        }
    }

    /**
     * A session bound to {@code replicaId} was released: it no longer counts among the replica's sessions, nor
     * as load its samples have yet to show. Without this a replica that took a run of short sessions looked busy
     * for the load board's horizon after they had all ended.
     */
    void released(String replicaId) {
        board.noteRelease(replicaId);
        counts.noteReleased(replicaId);
    }

    private List<Candidate> candidates(Collection<Replica> replicas) {
        long now = time.millis();
        List<Candidate> out = new ArrayList<>(replicas.size());
        for (Replica r : replicas) {
            out.add(candidate(r, now));
        }
        return out;
    }

    /** A replica as the placement policy sees it: fresh only with a metrics endpoint and a recent sample. */
    private Candidate candidate(Replica r, long now) {
        ReplicaLoad load = board.get(r.id());
        boolean fresh = r.metricsUrl() != null && load.isFresh(now, board.staleAfterMillis());
        return load.candidate(r.id(), fresh, counts.get(r.id()), counts.recent(r.id()));
    }

    private void noteDegraded(boolean now) {
        if (now != degraded) {
            degraded = now;
            if (now) {
                LOG.warn("no replica has fresh load metrics; placing new sessions by session count only. Check "
                        + "that the routers can reach each replica's Spark REST API (metricsUrl)");
            } else {
                LOG.info("load metrics are fresh again; placement is load-aware");
            }
        }
    }

    /** True while new sessions are placed without load figures (every replica's metrics stale). */
    public boolean isDegraded() {
        return degraded;
    }

    /** Every replica of {@code snapshot} as the placement policy would see it now (admin view, metrics). */
    public List<Candidate> candidatesNow(PoolSnapshot snapshot) {
        return candidates(snapshot.all());
    }

    public Placer placer() {
        return placer;
    }

    /** The groups the proposals respect (admin view, metrics). */
    public ReplicaGroups groups() {
        return groups;
    }
}
