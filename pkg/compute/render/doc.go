// Package render turns plan descriptions into dataflow operators on one
// worker (pkg/compute/runtime/dataflow), using the arrangement packages
// (batch, spine, trace) and the stateful operator logic of
// pkg/compute/operators.
//
// Shape of a rendered object. Every plan node yields an ok stream of rows
// and a list of error streams (expression errors such as division by zero,
// operator errors such as integer overflow in sum), concatenated only where
// they are consumed. Streams carry []dataflow.Update with the row in Val.
// Errors are rows (SQLSTATE, message), see ErrorRow/DecodeErrorRow.
//
// Arrangements. KeyBy evaluates key expressions (errors go to the error
// list), Arrange exchanges by row.Hash(key) to the owning worker and, each
// time its input frontier advances from f0 to f1, seals the updates in
// [f0, f1) into one batch of its trace, whose upper then is f1. The seal
// runs on fuel (batchBuild, arrangebuild.go: sorted runs of
// runUpdates(fuel) updates, each staged and written a fuel's share per
// schedule, then fuelled merges of runs; Env.ArrangeFuel, 0 unbounded):
// until it completes the operator holds its output frontier at
// the trace's upper, so a stream's frontier never passes its trace's upper,
// and the batch equals one Build of the same updates. Stateful
// operators (join, reduce, distinct, threshold, top-k) hold their own trace
// handles at f0, read the batches through f1 when the meet of their inputs
// advances, cut them into the batches before f0 and those in [f0, f1)
// (splitting, by copying, a batch that straddles either point because the
// inputs advance at different rates; see inputCut) and run the operator
// logic; handles then advance to f1, so compaction never merges a batch they
// still cut. Joins and reductions (StatefulFueled) emit a step's output in
// slices of the fuel per schedule, stopping between keys, holding their
// output frontier at f0 and reactivating themselves until the step is done
// (stateful.go). An arrangement's schedule does all its work on one budget,
// the fuel per schedule: the build, the merge work its new batch's insert
// pays, the debt earlier inserts owe and idle merging share it, and the
// spine counts the budget across all its merges in progress
// (trace.InsertBounded, PayDebt and Exert with one *int).
//
// Dataflows. Build renders a plan.DataflowDescription: source imports
// (SourceFactory; MemorySources for tests), index imports (an Import
// operator follows the exporting trace's upper, activated by it; Flatten,
// where a plan reads the import as a collection, walks the shared trace's
// batches in slices of flattenFuel updates, one
// slice per schedule, holding its frontier at the walk's lower bound, so a
// reader never materialises a snapshot's worth of row updates at once),
// objects in order, index exports
// (ok rows keyed by the export key, error rows keyed by themselves, both
// arranged; an Index holds compaction handles at as_of) and subscribe
// sinks (with a Shard: storage sinks, storagesink.go, whose whole output
// goes to worker 0's StorageSinkWriter). Constants are emitted at as_of by worker 0. Updates at or beyond
// Until are dropped at exports.
//
// Snapshot reads. A dataflow read only at its as_of (class OneShotRead, or
// until = as_of+1; snapshotTime) renders a reduction over (MFPs over) an
// import as SnapshotKeyBy, which walks the import's batches once through a
// cursor as of the as_of (seeking the keys an equality on the index key
// allows, seek.go) and sends consolidated (group, arguments) pairs, or for
// count/sum/avg/min/max folded per group (fold.go), to the reduction's
// arrangement; a join on an import arranged by the join key reads that
// arrangement directly. The walk reads each row only as far as the last
// column used (the first row, decoded in full, gives the arity every row
// shares; rowDecoder.prefix, row.Row.UnpackUsed), and decides the first
// MFP's leading `#c op literal` comparisons on the encoded column before
// decoding anything (encodedfilter.go): a rejected row costs a few byte
// comparisons, and one they all accept, under an MFP that computes no
// expression, skips the MFP's evaluation for its projection. TestSnapshotReaderMatchesFullDecode checks both against
// the reader that decodes every row to its end (sabotage: step over a
// fixed-width column one byte too far, and it fails); neither checks the
// columns it does not read, which the engine's own encoder wrote.
// Imports are flattened lazily,
// only when a plan reads them as a collection; ImportCounters counts which.
//
// Live imports. A dataflow that is not read only at its as_of imports a
// peer index (SharedImports) live (live.go, ImportLive): per shard, an
// operator that emits the published collection as of the as_of and then
// every batch published after its cursor, holding the publisher at the
// cursor through a SharedFollower; it refuses (ErrLiveImportLost) a chain
// whose since passed its cursor or that has no batch boundary there.
//
// Memory. Operators decode only the columns their expressions read
// (rowDecoder): decoding a text or bytes datum with an escaped byte copies
// it, so a full decode of a wide row copies its payload. Arrange sums
// equal pending updates once enough wait for the frontier and a sample
// shows repeats (a one-shot count(*) then holds one pending update, not
// one per row; distinct updates are never sorted for nothing).
//
// Lets. A Let's value is rendered once and its streams (rows and errors)
// bound to its id while its body renders, so every Get of the id reads
// them (plan.go, let); snapshot reductions over a local id are not
// memoised by their encoding, which does not say what the id binds. A Let
// in a recursive step is expanded (plan.ExpandLets) before the step is
// compiled.
//
// Recursion. A Recursive node renders as a fixpoint operator
// (recursive.go, fixpoint.go): its base and the binding-free subtrees of
// its step are ordinary dataflows whose rows are tagged with their input
// number and arranged under one empty key (so on one worker). An
// incremental node (plan.Recursive.Incremental: UNION, a step linear in
// the binding) keeps its fixed point with each row's depth and its
// derivation counts per depth (incfix.go, incfix_delta.go): inserts
// continue semi-naively, deletes over-delete by depth and rederive, and
// the state always equals what a from-scratch evaluation would give (the
// depths too, so the iteration limit is exact); errors fall back to the
// from-scratch evaluation. Otherwise the group logic re-derives the fixed
// point with a small evaluator of the step (reusing the operators' group
// logics) at every time an input changed, and the group stepper emits
// the difference, retractions included.
//
// Dropping. A stateful operator's step (a join's or reduction's whole
// output over [f0, f1)) runs in one Schedule call and buffers its output
// until the step ends; for a cross join that can be minutes and gigabytes.
// The worker applies a drop only between steps, so the step's emitter polls
// Operator.Dropping every stopCheckInterval updates and abandons the step
// (discarding its output, holding the operator's frontier at f0) once the
// dataflow is being dropped (stepAbandoned in stateful.go).
//
// Invariants: every worker renders identically (operator order is a pure
// function of the description); nothing here blocks; Drop releases every
// handle and closes every source.
package render
