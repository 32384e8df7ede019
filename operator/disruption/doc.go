// Package disruption decides, for the replicas of one cluster, which may lose their pods to
// a voluntary disruption (an eviction: a node drain) and says why in a condition.
//
// A replica's processes share fate: evicting one pod takes the whole replica down, so a
// replica's PodDisruptionBudget either forbids every eviction (maxUnavailable 0) or allows
// evicting all its pods (maxUnavailable = processes). What keeps reads flowing is that
// another replica of the cluster is hydrated while one is gone. The rules:
//
//   - A replica of a cluster with other replicas may be opened only while every other
//     replica is hydrated, and only one replica of a cluster is open at a time.
//   - It is opened only when it is wanted: some pod of it runs on a node being drained
//     (cordoned). So PDBs stay closed in steady state, and a drain waits (its evictions are
//     refused and retried) until the operator opens the budget of one replica.
//   - The open replica stays open while it is wanted or not back (its pods are still being
//     evicted or coming up elsewhere), as long as every other replica stays hydrated; once
//     it is back and no longer on a cordoned node, the next wanted replica may open.
//   - A replica alone in its cluster cannot be drained without interrupting reads: its
//     policy decides (Wait: never open; Allow: always open), and its condition says so.
//
// The package is pure: the reconciler observes, calls Decide, and applies the budgets,
// closing before opening so that two replicas of a cluster are never open at once.
package disruption
