// Package batch holds Tandem's unit of arranged data: an immutable, sorted,
// columnar batch of updates (key, val, time, diff), with the Description
// (lower, upper, since) that says which times it covers.
//
// Layout. A batch stores its keys and values in two byte arenas with uint32
// offset arrays, and its times and diffs in plain integer slices, so a batch of
// millions of updates holds a handful of pointers and the garbage collector
// never walks per-update memory. Columns that carry no information are not
// stored: per-key value ranges when every key has one value, per-value
// update ranges when every value has one update, and a time or diff column
// whose entries are all equal (a snapshot's diffs of 1; times compacted to
// since). A settled arrangement of int64 keys and 16-byte values thus takes
// 32 bytes per update, of which 24 are the data. Keys are distinct and sorted by
// bytes.Compare; each key owns a sorted run of distinct values; each (key,
// val) owns a run of updates with strictly increasing times and non-zero
// diffs. Every update time t satisfies lower <= t, and t < upper unless
// logical compaction (since) advanced it.
//
// Memory off the Go heap (arena.go; on unless SetOffHeap(false)). A sealed
// plain batch (or part) whose columns take 64 KiB or more moves them into
// an arena: one anonymous
// mapping, outside the Go heap. The collector's heap then holds only the
// batches' metadata, so its heap goal, which paces collection, is set by
// that and by transient garbage, not by the arrangements: an index of a GiB
// no longer lets a GiB of garbage pile up before the next collection.
//
// Ownership and lifetime. An arena belongs to the one batch that sealed it
// and is released by that batch's cleanup (runtime.AddCleanup): its
// mapping is pooled for a later arena or unmapped (arenapool.go),
// that is once no goroutine can reach the *Batch. Every way of reading a
// batch holds the *Batch: a Cursor or CursorList, a spine's chain, a merge's
// inputs, a trace snapshot, a sharing registry's published snapshot and the
// imports reading it. So a reader that took a batch keeps its memory for
// exactly as long as it holds the batch, whoever dropped it meanwhile (a
// spine that merged it away, a publisher that compacted), and no reader
// can see a released arena. Nothing releases an arena explicitly: the spine
// does not know its readers (render's operators, peeks and imports hold
// batches without telling it), and a release they missed would be a fault,
// where a late collection only delays the unmapping. To keep that delay
// short when little Go heap is allocated, a spine that has dropped 64 MiB
// of off-heap batches starts a collection (Reclaimer, which a batch build
// uses too for the runs its merges consume).
//
// Invariants callers rely on:
//   - A *Batch is never mutated after it is built; any goroutine may read it
//     without locks. Slices returned by cursors (keys, values, times, diffs)
//     stay valid (and unchanged) while the caller can reach the batch: it
//     holds the *Batch, or a Cursor or CursorList over it. A slice kept
//     beyond that, such as a row sent downstream in an update, must be
//     copied (render's Flatten copies the rows it emits from off-heap
//     batches; Builder.Push copies). A function that reads slices after
//     its own last use of the batches and cursors they came from (a sort
//     of values it collected) relies on its caller, or calls
//     runtime.KeepAlive on them (trace.AccumulateKey): the collector sees
//     no pointer in a slice of an arena. For a batch on the heap a kept
//     slice stays valid as before, but code must not rely on where a batch
//     lives. Poison (SetPoison, TANDEM_ARENA_POISON=1) makes every breach
//     of this rule fault in tests.
//   - Reads at any time t with since <= t are exact: summing the diffs of
//     updates with time <= t gives the accumulation the unmerged inputs gave.
//   - Nothing does unbounded work per call: Builder.BuildStep writes a
//     sorted build a limited number of updates at a time (Build is
//     StartBuild, which sorts, and one unlimited BuildStep); Merger.Work
//     consumes explicit fuel,
//     and a merge writes its output in parts (a parted batch, parted.go) of
//     about 16,384 updates or 2 MiB, each allocated when the merge reaches
//     it, so no call allocates, clears or seals memory in proportion to the
//     batches merged. A parted batch reads exactly like a plain one.
//   - A single arena is limited to 4 GiB and a batch to 2^32-1 updates;
//     Builder.Build and NewMerger report ErrTooLarge instead of overflowing.
//
// API summary:
//
//	var b batch.Builder
//	b.Push(key, val, t, diff)                 // any order
//	bat, err := b.Build(batch.Description{Lower: l, Upper: u, Since: s})
//	m, err := batch.NewMerger(older, newer, since) // older.Upper == newer.Lower
//	for !m.Work(&fuel) { ... }; merged := m.Result()
//	c := bat.Cursor()                          // borrows bat
//	for ; c.KeyValid(); c.StepKey() { for ; c.ValValid(); c.StepVal() { ts, ds := c.Updates() } }
//	cl := batch.NewCursorList(batches)         // merged view over many batches
//	bat.SizeBytes(), bat.Len(), bat.KeyCount(), bat.Description()
//	bat.OffHeapBytes()                         // bytes of its arenas (0: on the heap)
//	ab, err := batch.AbsorbEmpty(empty, bat)   // bat over both intervals, sharing its columns
//	batch.OffHeapUsage()                       // arenas by state: live, merging, retired, pooled
package batch
