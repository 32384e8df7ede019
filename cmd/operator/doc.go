// Command operator runs the Tandem Kubernetes operator: it reconciles ComputeReplica
// resources (compute.tandem.dev/v1alpha1) into headless Services, StatefulSets and
// PodDisruptionBudgets, and rolls replicas of a cluster one at a time. See docs/kubernetes.md.
//
// Every flag has a TANDEM_OPERATOR_ environment fallback (--leader-elect reads
// TANDEM_OPERATOR_LEADER_ELECT).
package main
