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
// Materialized views are stored like tables: view u<N> is a sink shard
// u<N> in storage (a storage collection, readable from every cluster, by
// one-shot reads and by other dataflows as a source), written by the
// storage sink of a maintained dataflow on the view's cluster (the sink's
// compute collection has a second id allocated with the view). The sink
// writes corrections with compare-and-append (pkg/compute/sink), so every
// replica of the cluster may run it. Recovery re-registers the shard and
// re-creates the dataflow at an as_of at or below the shard's upper (read
// policies are paused while recovering so inputs are still readable
// there): reads are served from the shard at once, and the dataflow only
// appends what the shard lacks. Dropping the view drops its shard.
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
