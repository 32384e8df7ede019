// Command controller is Tandem's environment: the SQL front door, the
// catalog, table storage and the compute controller. Replicas are local
// processes started by the process orchestrator (the embedded default), or,
// with --orchestrator=kubernetes, ComputeReplica resources that the operator
// turns into pods; then the controller also reports every replica's
// hydration as its Hydrated condition, which the operator's rollouts wait
// for, and it imports ComputeReplicas users applied for its clusters into its
// catalog (adopt.go). See docs/design/kubernetes-orchestrator.md.
package main
