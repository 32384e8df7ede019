// Package render turns a ComputeReplica into the Kubernetes objects that run it: one headless
// Service, one StatefulSet and one PodDisruptionBudget, all named after the replica.
//
// Every function here is pure: the same ComputeReplica and Options give byte-identical
// objects, which is what makes the pod-template hash meaningful and the golden tests under
// testdata/ stable. Invariants:
//
//   - The StatefulSet uses pod management Parallel (processes start together: each waits
//     for its peers anyway) and update strategy OnDelete (the operator, not the StatefulSet
//     controller, decides when pods are replaced, and replaces all of a replica's pods at
//     once because its processes share fate).
//   - The headless Service publishes not-ready addresses, so processes can resolve their
//     peers before they are ready (they become ready only once connected to each other).
//   - Peer lists name every process by its stable DNS name, in process order, so process i
//     of the list is the pod with ordinal i.
//   - The pod-template hash covers the whole rendered pod template (before the hash label is
//     added), so any change that needs new pods changes the hash and nothing else does.
//   - Pods run as non-root with a read-only root filesystem and no capabilities.
package render
