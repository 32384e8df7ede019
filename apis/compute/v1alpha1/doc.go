// Package v1alpha1 holds the compute.tandem.dev/v1alpha1 API: the ComputeReplica resource,
// one compute replica (a fixed set of replica processes that share fate) of a named Tandem
// cluster.
//
// Invariants the types and their CEL rules keep, so that the operator never has to reject a
// stored object: the cluster name is a DNS label and never changes; processes, workers and
// their product are bounded; the four ports are distinct; the progress deadline is longer
// than min-ready seconds. Status is written by two field managers: the operator owns
// everything but the Hydrated condition, which the controller that manages the cluster owns.
//
// The deepcopy code and the CRD YAML under config/crd/ are generated from the markers here
// by `make generate-k8s`.
//
// +kubebuilder:object:generate=true
// +groupName=compute.tandem.dev
package v1alpha1
