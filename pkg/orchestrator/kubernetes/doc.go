// Package kubernetes is the controller's orchestrator on Kubernetes: a replica is a
// ComputeReplica resource (compute.tandem.dev/v1alpha1) in one namespace, and the operator
// turns it into pods and publishes their computectl addresses in its status. The controller
// never touches pods.
//
// What it writes, always with server-side apply and its own field manager:
//   - EnsureReplica applies "<cluster>-<replica>" with the replica's shape, image and
//     resources, labelled with the managing controller, cluster and replica name. Setting
//     ReplicaConfig.Interactive sets spec.interactiveRuntime, which makes the operator roll
//     the replica.
//   - ListReplicas adopts replicas a user applied for a known cluster: it labels them, and
//     from then on owns only the labels and spec.interactiveRuntime; the user's manifest
//     keeps owning their shape. AdoptedReplicas returns them, for the controller to add to
//     its catalog.
//   - SetHydrated applies the Hydrated condition on the status subresource with a separate
//     field manager; conditions are a map list keyed by type, so the operator's conditions
//     and the controller's never overwrite each other. The controller calls it for every
//     replica several times a second (controller.ReportHydration); a report the cached
//     object already carries, for the same generation, writes nothing.
//
// Invariants:
//   - Reads go through the client given to New (an informer-backed cache in production);
//     a replica missing from the cache is looked up on the API server before being reported
//     as ErrNotFound, so a Status right after an EnsureReplica does not miss it.
//   - Every write of an existing object carries its UID as a precondition, so a replica
//     deleted and recreated concurrently is never adopted or hydrated by mistake, and a
//     deleted one is never resurrected by a status or adoption apply.
//   - RemoveReplica deletes in the foreground and returns once the object is gone, that is
//     once the garbage collector deleted its StatefulSet and pods.
//   - Replica processes share fate: their states are reported together.
package kubernetes
