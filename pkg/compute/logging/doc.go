// Package logging defines the introspection relations a runtime logs about
// itself and the source that turns periodic snapshots of them into a
// collection.
//
// Each relation (Relation, with its RelationDesc from Desc) is produced per
// worker: on every refresh interval the worker computes the relation's
// current rows for itself (operators with their scheduling time, index
// sizes, frontiers, active peeks, step-duration histogram) and the Source
// emits the difference from the previous snapshot at the current time, so
// the collection as of t is the latest snapshot taken at or before t. Every
// row carries its worker index, so the workers' rows never collide. The
// snapshot runs on the worker goroutine (it reads worker state without
// locks); between refreshes the source sleeps on a timer and costs nothing.
//
// The runtime builds one dataflow per enabled relation (Dataflow), reading
// the source and exporting an index under the system GlobalID the
// controller assigned, readable by peeks like any other index.
package logging
