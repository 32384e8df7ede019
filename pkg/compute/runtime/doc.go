// Package runtime is one process's part of a compute runtime: W worker
// goroutines (of W*P across P processes) that build dataflows from plan
// descriptions, maintain their index exports, answer peeks and report
// frontiers. The replica (pkg/compute/server) drives it with the compute
// commands; pkg/compute/runtime/dataflow is its scheduling core and
// pkg/compute/render turns plans into operators.
//
// Commands (Go calls, safe from any goroutine, applied in call order):
//
//	rt, err := runtime.New(runtime.Config{Workers: W, Processes: P, Process: p,
//		Fabric: mesh, Sources: factory, Respond: send, Metrics: m, OnFatal: exit})
//	rt.Start(ctx); defer rt.Stop()
//	rt.CreateDataflow(desc)              // validated synchronously; error = refused
//	rt.AllowCompaction(id, f)            // closed f drops the collection
//	rt.Peek(runtime.Peek{UUID, Target, Timestamp, Keys, MFP})
//	rt.CancelPeek(uuid)
//	rt.UpdateConfiguration(map[string]string{"max_result_size": "1048576", "peek_walk_budget": "65536"})
//	rt.EnableIntrospection(map[logging.Relation]plan.GlobalID{...}, time.Second, asOf)
//
// Responses arrive through Config.Respond, called from one goroutine in
// order: *Frontiers, *PeekResponse, *SubscribeResponse.
//
// Guarantees:
//   - A refused command (invalid plan, duplicate export id, unknown id)
//     returns an error and changes nothing; the runtime keeps serving.
//   - Frontiers never regress; the first report of a collection is not
//     below its dataflow's as_of; a dropped collection is reported once with
//     every frontier closed. A process reports the meet over its workers.
//   - Exactly one PeekResponse per peek UUID per process, with that
//     process's shard merged over its workers: rows, an error, Canceled
//     (only after CancelPeek), or a PeekStream. A peek marked Streamable
//     (its consumer needs no total order) whose walk buffers more than
//     peek_stash_threshold bytes becomes a stream: the walks hand over
//     consolidated chunks of about that size into a buffer of 2 chunks per
//     worker and park (on the offload pool, holding no goroutine) while it
//     is full, so a streamed result holds about (3 x workers) chunks in the
//     process whatever its size. A row may repeat across chunks. The
//     stream ends with io.EOF, the peek's error, or context.Canceled after
//     CancelPeek (which then sends no second response). Merging worker
//     answers happens outside the peek lock, so one large answer does not
//     stall the workers' steps or new peeks. A peek with TopK set (an
//     ordered peek with a limit) keeps at most that many rows per walk. A peek waits until its time is complete in
//     the index (time < upper); it is re-examined after each worker step,
//     and a worker steps only when something arrived, so waiting costs no
//     polling. A time before the index's since (its as_of, advanced by
//     AllowCompaction) fails with trace.ErrCompacted; a non-empty error
//     collection at the time fails the peek with that error (SQLSTATE
//     preserved); a negative multiplicity or a result above the maximum
//     size is an error.
//   - A point read (a peek with literal keys) whose time is already sealed
//     in every local shard of its index is served off the workers, on the
//     caller's goroutine (or the offload pool past the walk budget), so it
//     never waits for a worker's step in progress; the shards' answers merge
//     in the same aggregator as the workers', so it still gets exactly one
//     response. Any other peek, or one that would fail, goes to the workers.
//     SealedPeeks counts the reads served so.
//   - Dropping a dataflow (its last export dropped) releases every trace
//     handle and closes every source on every worker; a runtime leaves no
//     goroutine behind after Stop.
//   - A peek's cursor walk advances by at most peek_walk_budget (key, value)
//     visits per worker step, so a large scan does not stall the worker's
//     operators or a point lookup behind it; the captured batches are
//     immutable, so the walk stays a read as of its time.
//   - With Config.Publisher set (the maintenance runtime of a two-runtime
//     process), every index export shard is published when built, refreshed
//     when its frontiers change, compacted with AllowCompaction and closed
//     when dropped.
//   - Introspection (EnableIntrospection) maintains the relations of package
//     logging as system indexes, readable by peeks like any other. The
//     peeks another runtime of the process serves (the interactive runtime,
//     which has no logging) are recorded with ForeignPeekStarted and
//     ForeignPeekFinished: active ones appear in the peeks relation,
//     reported by the process's first worker, and answered ones count in
//     peek_durations; the metrics stay with the serving runtime.
//   - A fatal error (lost peer, corrupt exchange message, broken
//     arrangement) is reported once through Config.OnFatal: shared fate.
//   - Metrics.ArrangementMaintenance receives, per worker, the scheduling
//     time of its arrange operators (sealing batches, inserting into and
//     merging spines), sampled at most every 100 ms of worker activity.
//
// Testing: package runtimetest runs P runtimes of W workers in one test
// process over an in-memory fabric with memory tables as sources; it is the
// entry point for engine property tests.
package runtime
