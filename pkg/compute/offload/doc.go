// Package offload decides where an index peek's walk runs: on the worker
// that owns the shard, or on a bounded pool of goroutines.
//
// A walk over an arrangement shard is resumable (peek.Walk) and reads only
// immutable batches it captured, so it can continue on any goroutine with no
// copy and no lock. Under the Budgeted mode the worker walks a bounded number
// of records and hands the rest to the pool; under Offload the whole walk
// runs on the pool; under Inline it runs to completion on the worker. The
// point is head-of-line blocking: one long walk (a full scan, or a lookup on
// a key with millions of values) must not stall every peek queued behind it
// on that worker.
//
// Guarantees: results are identical in every mode (the walk is the same, only
// its goroutine differs); done is called exactly once per Run; a canceled
// context stops an offloaded walk at its next slice and reports the
// context's error; Close waits for every pool goroutine, so nothing leaks.
package offload
