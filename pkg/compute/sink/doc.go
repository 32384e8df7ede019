// Package sink writes a materialized view's dataflow output to its storage
// shard (pkg/storage sink shards, reached through the Shard interface this
// package defines) and keeps the shard correct however many
// writers there are and however often they restart.
//
// The shard is written only with compare-and-append: updates at times in
// [expected upper, new upper) are accepted only if the shard's upper still
// is the expected one. A writer never appends what the dataflow says;
// it appends the correction, the difference between what the dataflow says
// the view's contents are and what the shard already holds:
//
//   - persisted: the shard's contents accumulated over every time below
//     its upper U, learned from the shard (a full read at start, then the
//     writer's own appends and, after losing a race, what others wrote in
//     between);
//   - correction: desired updates minus persisted updates, each moved to
//     max(time, U, as_of), since the shard cannot change below U and the
//     dataflow says nothing below its as_of;
//   - once the dataflow's output frontier F passes U, the correction at
//     times below F is final, and appending it from U to F makes the shard
//     at every time t in [U, F) equal the view at t.
//
// Invariants: the shard's contents at every time in [max(U0, as_of), U)
// equal the view's (U0: the upper when the writer started); nothing is
// written twice because a writer whose append lost re-reads what the
// winner wrote and subtracts it; the shard's upper never regresses (it is
// only moved by successful appends). The view's error rows are written too,
// marked (render.StoredError), so readers of the shard fail with them. A
// dataflow whose frontier closed (a constant view) has its upper follow the
// wall clock. Cost: the writer keeps the shard's contents in memory (one
// map entry per distinct row).
//
// Observability: a Factory's Metrics (a consumer-defined interface; nil
// records nothing) hears every compare-and-append with its result
// (appended, lost the race, failed), the updates it carried and its
// duration; every shard read and why (the full read at start, or after a
// lost race); and, per sink and at every turn of the writer's loop, the
// write lag (the dataflow's output frontier minus the shard's upper as
// known, in timestamp ms; measured from as_of before the first read) and
// the number of rows in memory. A sink's state is forgotten when the last
// of its writers in the Factory stops, so per-sink series live exactly as
// long as the sink (a replaced dataflow's writer may overlap its
// successor's; the count of live writers per sink keeps the first to stop
// from deleting the other's series). The replica exports these as
// tandem_compute_sink_* (docs/design/protocol.md, "Replica metrics").
package sink
