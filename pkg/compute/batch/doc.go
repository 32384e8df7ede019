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
// Invariants callers rely on:
//   - A *Batch is never mutated after it is built; any goroutine may read it
//     without locks, and slices returned by cursors stay valid (and unchanged)
//     for as long as the caller keeps them.
//   - Reads at any time t with since <= t are exact: summing the diffs of
//     updates with time <= t gives the accumulation the unmerged inputs gave.
//   - Nothing does unbounded work per call: Merger.Work consumes explicit fuel,
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
package batch
