// Package orchestrator defines how the controller asks for compute replicas
// to exist, independently of where they run (local processes, Kubernetes).
//
// A replica is identified by (cluster, replica name) and consists of N
// processes of W workers each. An orchestrator makes the requested replicas
// exist and keeps them running; it reports, for every process, the address
// of its computectl endpoint, which the compute controller dials.
//
// Invariants every implementation keeps:
//   - EnsureReplica is idempotent: calling it again with the same config is
//     a no-op; with a changed config it replaces the replica's processes.
//   - Addresses may change when a process is restarted; callers re-read them
//     (Status) on every reconnect attempt rather than caching them.
//   - RemoveReplica returns only after the replica's processes are gone.
package orchestrator
