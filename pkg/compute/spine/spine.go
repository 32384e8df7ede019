package spine

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Errors callers act on.
var (
	// ErrStraddle: no batch boundary lies at the requested cut (a batch covers
	// times on both sides of it).
	ErrStraddle = errors.New("spine: cut straddles a batch")
	// ErrBeyondUpper: the requested cut is beyond the spine's upper.
	ErrBeyondUpper = errors.New("spine: cut beyond upper")
	// ErrBeforeLower: the requested cut is before the spine's lower.
	ErrBeforeLower = errors.New("spine: cut before lower")
	// ErrNotAdjacent: an inserted batch does not start at the spine's upper.
	ErrNotAdjacent = errors.New("spine: inserted batch not adjacent to upper")
	// ErrRegress: a frontier was moved backwards.
	ErrRegress = errors.New("spine: frontier regressed")
)

// FuelPerUpdate is the merge effort each inserted update pays for, per
// in-progress merge. A merge of two batches of class k (about 2^k updates
// each) starts only after 2^k updates have arrived and must finish before
// another 2^k arrive; 2 units per update is the least that guarantees it, 4
// leaves headroom for the per-value overhead.
const FuelPerUpdate = 4

// entry is one link of the chain: a complete batch or a merge in progress.
type entry struct {
	batch *batch.Batch
	merge *batch.Merger
	n     int // updates held (sum of the inputs for a merge)
	// owed is the merge work bounded inserts still owe this merge
	// (InsertBounded), paid by PayDebt, Exert and later inserts.
	owed int
}

func (e *entry) upper() frontier.Frontier {
	if e.merge != nil {
		_, newer := e.merge.Inputs()
		return newer.Upper()
	}
	return e.batch.Upper()
}

// Spine is the merged chain of an arrangement's batches.
type Spine struct {
	entries  []entry // oldest first
	lower    frontier.Frontier
	upper    frontier.Frontier
	logical  frontier.Frontier
	physical frontier.Frontier
	work     int64 // merge effort spent so far, in fuel units
	// reclaim starts a collection once the spine has dropped enough
	// off-heap batches (merge inputs): a dropped batch's arena is released
	// once the collector finds it unreachable (package batch), and with the
	// arenas off the heap a replica that merges but allocates little might
	// otherwise go minutes without a collection, keeping them mapped.
	reclaim batch.Reclaimer
}

// New returns an empty spine whose lower, upper, since and physical frontier
// are all lower.
func New(lower frontier.Frontier) *Spine {
	return &Spine{lower: lower, upper: lower, logical: lower, physical: lower}
}

// Lower returns the lower frontier of the first batch.
func (s *Spine) Lower() frontier.Frontier { return s.lower }

// Upper returns the upper frontier of the last batch: every update at a time
// before it has been inserted.
func (s *Spine) Upper() frontier.Frontier { return s.upper }

// Since returns the logical compaction frontier: reads at t >= Since are exact.
func (s *Spine) Since() frontier.Frontier { return s.logical }

// Physical returns the physical compaction frontier.
func (s *Spine) Physical() frontier.Frontier { return s.physical }

// Insert appends b, which must start at the spine's upper, and spends
// FuelPerUpdate*(b.Len()+1) units on each in-progress merge. An empty batch
// with lower == upper is ignored.
func (s *Spine) Insert(b *batch.Batch) error { return s.InsertBounded(b, nil) }

// InsertBounded is Insert spending at most *fuel units of merge work in
// all (fuel nil: no bound, as Insert), subtracting what it spent. The
// FuelPerUpdate*(b.Len()+1) units the batch owes each in-progress merge
// beyond that are kept as that merge's debt, paid by PayDebt (or by Exert
// and later inserts), so that inserting a large batch (a hydration's
// snapshot after another large one) never pays a whole merge of old data,
// or one payment per merge in progress, in one call.
func (s *Spine) InsertBounded(b *batch.Batch, fuel *int) error {
	if b.Lower() != s.upper {
		return fmt.Errorf("insert batch %v at spine upper %v: %w", b.Description(), s.upper, ErrNotAdjacent)
	}
	if b.Upper() == b.Lower() && b.Len() == 0 {
		return nil
	}
	s.entries = append(s.entries, entry{batch: b, n: b.Len()})
	s.upper = b.Upper()
	s.startMerges()
	owe := FuelPerUpdate * (b.Len() + 1)
	for i := range s.entries {
		if e := &s.entries[i]; e.merge != nil {
			e.owed += owe
		}
	}
	s.PayDebt(fuel)
	return nil
}

// PayDebt pays what bounded inserts still owe the in-progress merges,
// newest merge first (so small merges complete and cascade), spending at
// most *fuel units in all (fuel nil: all of it) and subtracting what it
// spent; it reports whether debt remains. A merge's debt lapses when it
// completes (as Insert's fuel does); merges started since get fuel from
// the inserts after them.
func (s *Spine) PayDebt(fuel *int) bool {
	s.startMerges()
	for i := len(s.entries) - 1; i >= 0; i-- {
		e := &s.entries[i]
		if e.merge == nil || e.owed <= 0 {
			continue
		}
		pay := e.owed
		if fuel != nil {
			if *fuel <= 0 {
				break
			}
			pay = min(pay, *fuel)
		}
		left := pay
		s.advance(i, &left)
		if fuel != nil {
			*fuel -= pay - left
		}
	}
	s.startMerges()
	return s.Debt() > 0
}

// Debt returns the merge work bounded inserts still owe, summed over the
// in-progress merges.
func (s *Spine) Debt() int {
	n := 0
	for i := range s.entries {
		if e := &s.entries[i]; e.merge != nil {
			n += e.owed
		}
	}
	return n
}

// SetLogical advances the logical compaction frontier; merges started from
// now on advance times to it. A closed frontier means nothing will be read
// again; merges then stop advancing times.
func (s *Spine) SetLogical(f frontier.Frontier) error {
	if !s.logical.LessEqual(f) {
		return fmt.Errorf("set logical compaction %v below %v: %w", f, s.logical, ErrRegress)
	}
	s.logical = f
	return nil
}

// SetPhysical advances the physical compaction frontier, allowing merges of
// batches whose merged upper is at or before it. The merges start on the next
// Insert or Exert.
func (s *Spine) SetPhysical(f frontier.Frontier) error {
	if !s.physical.LessEqual(f) {
		return fmt.Errorf("set physical compaction %v below %v: %w", f, s.physical, ErrRegress)
	}
	s.physical = f
	return nil
}

// Exert spends up to *fuel units on merges without new data, newest merges
// first so small merges complete and cascade, and reports whether merge work
// remains. It subtracts the work done from *fuel.
func (s *Spine) Exert(fuel *int) bool {
	for *fuel > 0 {
		s.startMerges()
		progressed := false
		for i := len(s.entries) - 1; i >= 0 && *fuel > 0; i-- {
			if e := &s.entries[i]; e.merge != nil {
				progressed = true
				s.advance(i, fuel)
			}
		}
		if !progressed {
			break
		}
	}
	s.startMerges()
	return s.pendingWork()
}

// pendingWork reports whether any merge is in progress.
func (s *Spine) pendingWork() bool {
	for i := range s.entries {
		if s.entries[i].merge != nil {
			return true
		}
	}
	return false
}

// advance runs the merge of entry i with fuel, counts the work against
// what the merge is owed, and installs its result when done (its debt
// lapses).
func (s *Spine) advance(i int, fuel *int) {
	e := &s.entries[i]
	before := *fuel
	done := e.merge.Work(fuel)
	spent := before - *fuel
	s.work += int64(spent)
	e.owed = max(0, e.owed-spent)
	if done {
		older, newer := e.merge.Inputs()
		e.batch = e.merge.Result()
		e.merge = nil
		e.n = e.batch.Len()
		e.owed = 0
		s.retire(older, newer)
	}
}

// retire notes that the spine no longer holds older and newer. Readers that
// took them (snapshots, cursors, imports) keep them, and their arenas, alive
// for as long as they hold them; once enough off-heap memory has been
// dropped, a collection is started in the background so that the arenas of
// batches nobody holds are released promptly.
func (s *Spine) retire(older, newer *batch.Batch) { s.reclaim.Dropped(older, newer) }

func class(n int) int { return bits.Len(uint(n)) }

// startMerges replaces every eligible pair of adjacent complete batches with
// a merge. A pair is eligible when the older batch's size class is at or
// below the newer one's and the merged upper is not beyond the physical
// frontier. An eligible pair whose older batch is empty is replaced at once
// by the newer batch over both intervals (batch.AbsorbEmpty), sharing its
// columns: no merge, no copy. Uppers increase along the chain, so the scan stops at the first
// batch beyond the physical frontier.
func (s *Spine) startMerges() {
	for {
		started := false
		for i := 1; i < len(s.entries); i++ {
			older, newer := &s.entries[i-1], &s.entries[i]
			if !newer.upper().LessEqual(s.physical) {
				break
			}
			if older.merge != nil || newer.merge != nil || class(older.n) > class(newer.n) {
				continue
			}
			if older.n == 0 {
				// Nothing to merge in: newer takes over older's interval
				// without a copy (a hydration's snapshot after a run of
				// empty ticks would otherwise be rewritten whole, its
				// copy mapped beside it until the merge ends).
				if b, err := batch.AbsorbEmpty(older.batch, newer.batch); err == nil {
					*older = entry{batch: b, n: b.Len()}
					s.entries = slices.Delete(s.entries, i, i+1)
					started = true
					continue
				}
			}
			m, err := batch.NewMerger(older.batch, newer.batch, s.logical)
			if err != nil {
				// Adjacency holds by construction; the only other failure is
				// ErrTooLarge, and then the pair simply stays unmerged.
				continue
			}
			*older = entry{merge: m, n: older.n + newer.n}
			// slices.Delete zeroes the vacated tail slot, so the backing array
			// does not keep the merged inputs alive.
			s.entries = slices.Delete(s.entries, i, i+1)
			started = true
		}
		if !started {
			return
		}
	}
}

// WorkDone returns the merge effort spent so far, in fuel units (about one
// per update read), for introspection and tests.
func (s *Spine) WorkDone() int64 { return s.work }

// Batches returns the current chain (inputs of in-progress merges in place
// of the merge) as a fresh slice.
func (s *Spine) Batches() []*batch.Batch {
	out := make([]*batch.Batch, 0, len(s.entries)+4)
	for i := range s.entries {
		out = appendEntry(out, &s.entries[i])
	}
	return out
}

func appendEntry(out []*batch.Batch, e *entry) []*batch.Batch {
	if e.merge != nil {
		older, newer := e.merge.Inputs()
		return append(out, older, newer)
	}
	return append(out, e.batch)
}

// BatchesThrough returns the batches covering [lower, u) exactly: it fails
// with ErrStraddle if a batch spans u, ErrBeyondUpper if u is beyond the
// spine's upper and ErrBeforeLower if u is before its lower. Merging never
// removes a boundary at or beyond the physical frontier, so a cut there that
// matched an inserted batch boundary keeps succeeding.
func (s *Spine) BatchesThrough(u frontier.Frontier) ([]*batch.Batch, error) {
	if !u.LessEqual(s.upper) {
		return nil, fmt.Errorf("batches through %v (upper %v): %w", u, s.upper, ErrBeyondUpper)
	}
	if !s.lower.LessEqual(u) {
		return nil, fmt.Errorf("batches through %v (lower %v): %w", u, s.lower, ErrBeforeLower)
	}
	all := s.Batches()
	for i, b := range all {
		if b.Lower() == u {
			return all[:i], nil
		}
		if u.Less(b.Upper()) {
			return nil, fmt.Errorf("batches through %v: batch %v: %w", u, b.Description(), ErrStraddle)
		}
	}
	return all, nil // u == upper
}

// Snapshot is an immutable view of a spine at one moment.
type Snapshot struct {
	Batches []*batch.Batch
	Lower   frontier.Frontier
	Since   frontier.Frontier
	Upper   frontier.Frontier
}

// Snapshot returns the current chain and frontiers.
func (s *Spine) Snapshot() Snapshot {
	return Snapshot{Batches: s.Batches(), Lower: s.lower, Since: s.logical, Upper: s.upper}
}

// Len returns the number of updates held (counting merge inputs, not
// partial outputs).
func (s *Spine) Len() int {
	n := 0
	for i := range s.entries {
		n += s.entries[i].n
	}
	return n
}

// BatchCount returns the number of batches a reader of the chain sees.
func (s *Spine) BatchCount() int {
	n := 0
	for i := range s.entries {
		n++
		if s.entries[i].merge != nil {
			n++
		}
	}
	return n
}

// SizeBytes returns the memory held by the chain, including the partial
// outputs of merges in progress.
func (s *Spine) SizeBytes() int {
	n := 0
	for i := range s.entries {
		e := &s.entries[i]
		if e.merge != nil {
			older, newer := e.merge.Inputs()
			n += older.SizeBytes() + newer.SizeBytes() + e.merge.SizeBytes()
		} else {
			n += e.batch.SizeBytes()
		}
	}
	return n
}
