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
//
// Chunked walks (RunChunked, for results streamed in chunks) hand each chunk
// to a Sink. A chunk is never handed over on the worker: a walk with a chunk
// ready moves to the pool whatever the mode. When the sink is full the walk
// parks, holding no goroutine, and the sink re-queues it when it has room
// (or when its consumer gave up, the walk's context then being canceled),
// so a slow consumer holds back only its own walks, never the pool.
package offload
