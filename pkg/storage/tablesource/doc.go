// Package tablesource plugs table shards into a replica's dataflows: it
// implements render.SourceFactory for source imports of kind "table" (tables
// and materialized views, whose shards are read alike) by listening to the
// controller's storage service. DialStorage gives the replica the storage
// client that materialized views' sinks also write through.
//
// Each worker opens its own listen stream and keeps the updates whose row
// hash maps to it, so the workers together produce every update exactly
// once. If the stream breaks (the controller restarted), the source
// re-listens from its current upper, discarding the re-sent snapshot, so
// nothing is delivered twice and the upper never regresses.
package tablesource
