// Package environment assembles the controller's parts behind the SQL
// layer's Backend interface: the durable catalog, table storage with its
// timestamp oracle, and the compute controller driving the replicas.
//
// Every DDL change is written to the catalog before it takes effect, so a
// restarted environment rebuilds the same state from the catalog alone:
// clusters and replicas are re-ensured, table shards re-registered, and
// every index and materialized view re-created as a dataflow (replicas
// that kept running reuse compatible dataflows; see plan.Compatible).
//
// Materialized views are maintained like indexes: the dataflow computes
// the view and exports an arrangement of it keyed by all columns, under a
// second GlobalId allocated with the view; reads of the view import that
// arrangement. They live on one cluster and are not persisted (their
// contents are recomputed after a restart).
//
// Introspection: each relation of pkg/compute/logging is a system item
// (s<N>) in schema introspection, and each cluster has one index GlobalId
// per relation, all stored in the catalog (see introspection.go) so that
// ids survive restarts. Reads of them go to one replica (the session's
// cluster_replica, or any connected one); a plain scan reads the replica's
// index directly, anything else runs a one-shot dataflow importing it.
// Indexes, materialized views and subscribes over them are refused: their
// contents differ per replica.
package environment
