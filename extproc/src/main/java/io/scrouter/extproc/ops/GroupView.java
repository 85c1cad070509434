package io.scrouter.extproc.ops;

/**
 * One replica group as an operator sees it.
 *
 * @param group                 the replica group's name
 * @param replicas              replicas of the group in the pool, whatever their state
 * @param readyReplicas         of those, the ones that take new sessions
 * @param activeSessions        live sessions bound to the group's replicas
 * @param utilisation           mean smoothed utilisation of the group's replicas with a fresh sample; NaN if none
 * @param maxSessionsPerReplica the group's cap, or -1 when uncapped
 * @param fullRefusals          new sessions of this request group refused because every replica it may use was
 *                              at its cap (RESOURCE_EXHAUSTED), since the router started
 */
public record GroupView(String group, long replicas, long readyReplicas, long activeSessions, double utilisation,
                        long maxSessionsPerReplica, long fullRefusals) {
}
