package trace

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/spine"
)

// Errors callers act on.
var (
	// ErrCompacted: the read time is before since (or the cut before the
	// handle's physical frontier); the data needed has been merged away.
	ErrCompacted = errors.New("trace: time compacted")
	// ErrNotYetReadable: the read time is at or beyond upper; its updates
	// may not all have arrived.
	ErrNotYetReadable = errors.New("trace: time not yet readable")
	// ErrReleased: the handle was already released.
	ErrReleased = errors.New("trace: handle released")
	// ErrRegress: a handle's frontier was moved backwards.
	ErrRegress = errors.New("trace: handle frontier regressed")
)

// Trace is an arrangement shared by one writer and any number of readers.
type Trace struct {
	mu       sync.Mutex
	spine    *spine.Spine
	logical  *frontier.Holds
	physical *frontier.Holds
	handles  map[*Handle]struct{}
}

// New returns an empty trace starting at lower.
func New(lower frontier.Frontier) *Trace {
	return &Trace{
		spine:    spine.New(lower),
		logical:  frontier.NewHolds(),
		physical: frontier.NewHolds(),
		handles:  map[*Handle]struct{}{},
	}
}

// Insert appends b (b.Lower() must equal Upper()) and does merge work
// proportional to its size.
func (tr *Trace) Insert(b *batch.Batch) error { return tr.InsertBounded(b, nil) }

// InsertBounded is Insert doing at most *fuel units of merge work in all
// (fuel nil: no bound) and subtracting what it did; the rest is owed, and
// paid by PayDebt (spine.Spine.InsertBounded).
func (tr *Trace) InsertBounded(b *batch.Batch, fuel *int) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.handles) == 0 && b.Lower() == tr.spine.Upper() && tr.spine.Physical().Less(b.Upper()) {
		// Nobody can ask for a cut: let the new batch merge at once.
		_ = tr.spine.SetPhysical(b.Upper())
	}
	return tr.spine.InsertBounded(b, fuel)
}

// MergeWork returns the merge effort the trace's spine has spent so far, in
// fuel units (spine.Spine.WorkDone).
func (tr *Trace) MergeWork() int64 {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.WorkDone()
}

// PayDebt does at most *fuel units in all (fuel nil: all) of the merge
// work bounded inserts still owe, subtracting what it did, and reports
// whether debt remains.
func (tr *Trace) PayDebt(fuel *int) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.PayDebt(fuel)
}

// Exert spends up to *fuel on merges without new data and reports whether
// merge work remains.
func (tr *Trace) Exert(fuel *int) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.Exert(fuel)
}

// Since returns the logical compaction frontier.
func (tr *Trace) Since() frontier.Frontier {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.Since()
}

// Upper returns the upper frontier: all updates before it are in the trace.
func (tr *Trace) Upper() frontier.Frontier {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.Upper()
}

// Physical returns the physical compaction frontier.
func (tr *Trace) Physical() frontier.Frontier {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.Physical()
}

// Snapshot returns the current batch list and frontiers.
func (tr *Trace) Snapshot() spine.Snapshot {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.spine.Snapshot()
}

// Stats are sizes for introspection and memory accounting.
type Stats struct {
	Updates, Batches, SizeBytes, Handles int
}

// Stats returns the trace's current sizes.
func (tr *Trace) Stats() Stats {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return Stats{
		Updates:   tr.spine.Len(),
		Batches:   tr.spine.BatchCount(),
		SizeBytes: tr.spine.SizeBytes(),
		Handles:   len(tr.handles),
	}
}

// LiveHandles returns the names of handles not yet released, sorted.
func (tr *Trace) LiveHandles() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	names := make([]string, 0, len(tr.handles))
	for h := range tr.handles {
		names = append(names, h.name)
	}
	sort.Strings(names)
	return names
}

// NewHandle returns a handle holding the trace's current since and physical
// frontier. name identifies it in LiveHandles.
func (tr *Trace) NewHandle(name string) *Handle {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.newHandleLocked(name, tr.spine.Since(), tr.spine.Physical())
}

func (tr *Trace) newHandleLocked(name string, logical, physical frontier.Frontier) *Handle {
	h := &Handle{tr: tr, name: name, logical: logical, physical: physical}
	tr.hold(tr.logical, logical, 1)
	tr.hold(tr.physical, physical, 1)
	tr.handles[h] = struct{}{}
	return h
}

// hold adds delta to the count of f in holds; a closed frontier holds nothing.
func (tr *Trace) hold(holds *frontier.Holds, f frontier.Frontier, delta int64) {
	t, ok := f.Time()
	if !ok {
		return
	}
	if err := holds.Update(t, delta); err != nil {
		// Handles add before they remove, so a count can never go negative.
		panic(fmt.Sprintf("trace: hold accounting broken: %v", err))
	}
}

// compactLocked moves the spine's frontiers to the meet of the live handles.
// The meet never regresses: handles only advance and new handles start at the
// current frontiers.
func (tr *Trace) compactLocked() {
	if len(tr.handles) == 0 {
		// No handle may ask for a cut, so every batch boundary below upper
		// may merge away; a later handle starts at upper. Logical compaction
		// stays put: unheld reads through ReadAt remain possible.
		if upper := tr.spine.Upper(); tr.spine.Physical().Less(upper) {
			_ = tr.spine.SetPhysical(upper)
		}
		return
	}
	if f := tr.logical.Frontier(); tr.spine.Since().Less(f) {
		_ = tr.spine.SetLogical(f) // advancing, cannot fail
	}
	if f := tr.physical.Frontier(); tr.spine.Physical().Less(f) {
		_ = tr.spine.SetPhysical(f)
	}
}

// ReadAt captures the trace for a read as of t. It fails with ErrCompacted
// if t is before since and ErrNotYetReadable if t is at or beyond upper.
func (tr *Trace) ReadAt(t frontier.Time) (Read, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	since, upper := tr.spine.Since(), tr.spine.Upper()
	if !since.LessEqualTime(t) {
		return Read{}, fmt.Errorf("read at %d (since %v): %w", t, since, ErrCompacted)
	}
	if upper.LessEqualTime(t) {
		return Read{}, fmt.Errorf("read at %d (upper %v): %w", t, upper, ErrNotYetReadable)
	}
	return Read{Batches: tr.spine.Batches(), Time: t, Since: since, Upper: upper}, nil
}

// Handle is a reader's hold on a trace.
type Handle struct {
	tr       *Trace
	name     string
	logical  frontier.Frontier // guarded by tr.mu
	physical frontier.Frontier
	released bool
}

// Name returns the handle's name.
func (h *Handle) Name() string { return h.name }

// Trace returns the trace the handle holds.
func (h *Handle) Trace() *Trace { return h.tr }

// Frontiers returns the handle's logical and physical frontiers.
func (h *Handle) Frontiers() (logical, physical frontier.Frontier) {
	h.tr.mu.Lock()
	defer h.tr.mu.Unlock()
	return h.logical, h.physical
}

// Clone returns a new handle with the same frontiers.
func (h *Handle) Clone(name string) (*Handle, error) {
	h.tr.mu.Lock()
	defer h.tr.mu.Unlock()
	if h.released {
		return nil, fmt.Errorf("clone handle %q: %w", h.name, ErrReleased)
	}
	return h.tr.newHandleLocked(name, h.logical, h.physical), nil
}

// SetLogical advances the earliest time the handle may read at. A closed
// frontier gives up logical reads entirely.
func (h *Handle) SetLogical(f frontier.Frontier) error {
	return h.set(&h.logical, h.tr.logical, f, "logical")
}

// SetPhysical advances the earliest cut the handle may ask for.
func (h *Handle) SetPhysical(f frontier.Frontier) error {
	return h.set(&h.physical, h.tr.physical, f, "physical")
}

func (h *Handle) set(cur *frontier.Frontier, holds *frontier.Holds, f frontier.Frontier, what string) error {
	tr := h.tr
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if h.released {
		return fmt.Errorf("set %s frontier of handle %q: %w", what, h.name, ErrReleased)
	}
	if !cur.LessEqual(f) {
		return fmt.Errorf("set %s frontier of handle %q to %v below %v: %w", what, h.name, f, *cur, ErrRegress)
	}
	tr.hold(holds, f, 1)
	tr.hold(holds, *cur, -1)
	*cur = f
	tr.compactLocked()
	return nil
}

// Release drops the handle's holds. Releasing twice is a no-op.
func (h *Handle) Release() {
	tr := h.tr
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if h.released {
		return
	}
	h.released = true
	tr.hold(tr.logical, h.logical, -1)
	tr.hold(tr.physical, h.physical, -1)
	delete(tr.handles, h)
	tr.compactLocked()
}

// BatchesThrough returns the batches covering [lower, u). u must be at or
// beyond the handle's physical frontier (ErrCompacted otherwise), at or before
// upper and at a batch boundary (spine.ErrBeyondUpper, spine.ErrStraddle).
func (h *Handle) BatchesThrough(u frontier.Frontier) ([]*batch.Batch, error) {
	tr := h.tr
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if h.released {
		return nil, fmt.Errorf("batches through %v for handle %q: %w", u, h.name, ErrReleased)
	}
	if !h.physical.LessEqual(u) {
		return nil, fmt.Errorf("batches through %v for handle %q (physical %v): %w", u, h.name, h.physical, ErrCompacted)
	}
	return tr.spine.BatchesThrough(u)
}
