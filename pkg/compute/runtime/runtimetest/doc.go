// Package runtimetest drives compute runtimes in one test process: P
// runtimes of W workers joined by an in-memory fabric, memory tables as
// sources, and synchronous helpers for peeks, frontiers and subscribes. It
// is the entry point for engine-level tests (pkg/compute/enginetest) that
// compare the engine with the reference evaluator.
//
//	h := runtimetest.New(t, runtimetest.Options{Workers: 2, Processes: 2})
//	tbl := h.Table(plan.User(1))                 // before CreateDataflow
//	h.MustCreate(desc)                           // desc imports u1 as a source
//	tbl.Append(updates, frontier.At(10))         // rows in Val, times < 10 complete
//	rows, err := h.Peek(plan.User(3), 9, nil)    // waits until 9 is readable
//	h.WaitFrontier(plan.User(3), frontier.At(10))
//
// Peek sends the peek to every process and merges their shards, exactly as
// a controller would. Everything stops at test cleanup; New registers a
// goroutine-free shutdown, so goleak passes in the caller's TestMain.
package runtimetest
