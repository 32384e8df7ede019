// Package spine keeps an arrangement's batches: an ordered chain of adjacent,
// immutable batches from the spine's lower to its upper, merged in the
// background of inserts so that the chain stays O(log n) long.
//
// Merging. A batch's size class is the bit length of its update count. When
// two adjacent complete batches have the older one's class at or below the
// newer one's, they are replaced by an in-progress merge (a binary counter
// over sizes, so sizes shrink from oldest to newest). Merges advance only with
// explicit fuel: each Insert of n updates gives every in-progress merge
// FuelPerUpdate*(n+1) units, enough that a merge finishes before newer data of
// its own size arrives, so an Insert's work is proportional to n times the
// number of merges in progress (O(log N) in steady state), never a whole
// merge of old data. InsertBounded and PayDebt bound that work by one
// budget for all merges together: what an insert owes each merge beyond
// the budget is kept as that merge's debt and paid, newest merge first, by
// later calls. Exert spends fuel on pending merges when there is no new
// data (and counts it against their debt). While a merge is in
// progress its inputs stay in the chain and are what readers see. An
// eligible pair whose older batch is empty is not merged: the newer batch
// takes over both intervals at once, sharing its columns
// (batch.AbsorbEmpty), so the empty ticks sealed before a hydration's
// snapshot never make the spine rewrite (and map a second copy of) the
// snapshot.
//
// Compaction. The logical frontier (since) is applied by every merge that
// starts after it is set: times are advanced to since, updates re-consolidated.
// The physical frontier gates merging: two batches are merged only if the
// merged batch's upper is at or before the physical frontier, so every batch
// boundary at or beyond it survives and BatchesThrough can still cut there.
// A new spine's physical frontier is its lower, so nothing merges until
// SetPhysical moves it (package trace does, from its handles).
//
// Invariants: batches are adjacent (each one's upper is the next one's
// lower); the first lower is the spine's lower and the last upper its upper;
// since and the physical frontier only advance; returned batch lists are fresh
// slices of immutable batches, safe to hand to any goroutine.
//
// Memory. The spine owns no batch memory explicitly: a batch's columns, on or
// off the Go heap (package batch), are released once nothing reaches the
// batch, so readers that took batches from the chain keep them after a merge
// drops them. Because off-heap arenas do not count towards the collector's
// heap goal, a spine that has dropped batch.ReclaimBytes of them starts a
// collection, so dropped batches nobody holds are released promptly.
//
// A Spine is not safe for concurrent use; package trace wraps it with a lock
// and read holds.
//
// API summary:
//
//	s := spine.New(frontier.Minimum())
//	err := s.Insert(b)                    // b.Lower() == s.Upper()
//	s.SetLogical(f); s.SetPhysical(f)     // advance only
//	more := s.Exert(&fuel)                // idle merging
//	bs, err := s.BatchesThrough(u)        // chain covering [lower, u); ErrStraddle if no boundary at u
//	snap := s.Snapshot()                  // {Batches, Lower, Since, Upper}
package spine
