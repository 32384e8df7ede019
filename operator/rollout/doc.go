// Package rollout is the operator's rollout policy for the replicas of one Tandem cluster:
// given what was observed about a replica (its desired and applied pod-template hashes, its
// pods, its rollout settings, the Hydrated condition) and about the other replicas of its
// cluster, Decide says what to do and which conditions to publish. It performs no I/O and
// reads time only from the value passed in, so every branch is tested without sleeping.
//
// The decision is one exhaustive switch over a small State. The rules it keeps:
//
//   - A replica's processes share fate, so a rollout deletes all its pods together; the
//     StatefulSet's template is only changed at that moment (update strategy OnDelete), so
//     a pod that dies for another reason comes back with the template it already had and a
//     replica never runs two templates side by side for long.
//   - At most one replica of a cluster rolls at a time: a rollout starts only when no other
//     replica of the cluster is rolling, and, unless this replica is itself unavailable (then
//     rolling it takes nothing down), only when every other replica is Available.
//   - A rollout lasts from deleting the old pods until the replica is Available (every
//     process ready for min-ready seconds) and, when a controller manages the cluster,
//     Hydrated for the current generation. Its start is recorded in status before any pod is
//     deleted, so an operator restarted mid-rollout carries on where it stopped.
//   - Paused holds a rollout that has not started; one under way finishes (its pods are
//     already gone). Past the progress deadline Progressing turns False with reason
//     ProgressDeadlineExceeded and the replica keeps counting as rolling, so the rest of
//     the cluster is not rolled onto a template that does not come up.
package rollout
