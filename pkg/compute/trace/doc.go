// Package trace shares one arrangement (a spine of batches) between its
// writer and its readers, and decides how far it may be compacted.
//
// A Trace owns a spine. Readers take Handles; each handle holds a logical
// frontier (the earliest time it may still read at) and a physical frontier
// (the earliest cut it may still ask for). The trace compacts logically and
// physically to the meet of its live handles' frontiers, so nothing a live
// handle may still need is forgotten. Handles only advance, and must be
// Released; LiveHandles lists the ones still held, so tests catch leaks. With
// no live handle the trace keeps its logical frontier where it is (it never
// compacts logically on its own) and lets its physical frontier follow upper
// (nobody can ask for a cut); whoever drops the arrangement drops the trace.
//
// Reads. ReadAt(t) captures the batch list under the trace's lock and checks
// since <= t < upper; outside that window it returns ErrCompacted or
// ErrNotYetReadable, never rows. A captured Read (and any batch list) is
// immutable and may be used from any goroutine without locks; the Go garbage
// collector keeps its batches alive, holds only decide what compaction may
// forget. Lookup and Scan accumulate a batch list as of a time.
//
// API summary:
//
//	tr := trace.New(lower)
//	tr.Insert(b); tr.Exert(&fuel)            // writer side
//	h := tr.NewHandle("index u12")           // holds at the current since/physical
//	h.SetLogical(f); h.SetPhysical(f); h.Release()
//	bs, err := h.BatchesThrough(u)           // cut at u >= h's physical frontier
//	r, err := tr.ReadAt(t)                   // ErrCompacted / ErrNotYetReadable
//	vals := r.Lookup(key, nil); r.Scan(func(key, val []byte, diff int64) bool { ... })
//	trace.AccumulateKey(batches, key, t, dst); trace.ScanAsOf(batches, t, fn); trace.ScanKeys(batches, t, fn)
//	tr.LiveHandles()
//
// A Trace and its Handles are safe for concurrent use.
package trace
