// Package operator is the root of the Kubernetes operator for ComputeReplica resources
// (compute.tandem.dev/v1alpha1). It holds no code: its sub-packages are
//
//   - render: pure functions from a ComputeReplica to the headless Service, StatefulSet and
//     PodDisruptionBudget that run it, plus the pod-template hash; no client, golden-tested.
//   - rollout: the policy deciding, for one replica of a cluster, whether to create, wait,
//     start rolling, finish rolling or hold, as one exhaustive switch with an injectable
//     clock; every decision names a condition reason.
//   - disruption: the policy deciding which replica of a cluster a node drain may evict
//     (its PodDisruptionBudget opened), one at a time and only while the others are
//     hydrated; pure, table-tested.
//   - reconciler: the controller-runtime reconciler that observes a cluster's replicas,
//     asks rollout what to do, applies the rendered objects with server-side apply and
//     writes status conditions and events.
//
// The operator never imports the compute engine: it knows replicas only through their
// flags, ports and health endpoints.
package operator
