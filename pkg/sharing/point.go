package sharing

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Errors readers act on.
var (
	// ErrCompacted: the requested time is below what the point can still
	// promise to readers.
	ErrCompacted = errors.New("sharing: time compacted past")
	// ErrDropped: the publisher dropped the index.
	ErrDropped = errors.New("sharing: index dropped")
	// ErrAlreadyPublished: a second publisher tried to adopt a point.
	ErrAlreadyPublished = errors.New("sharing: point already published")
)

// Snapshot is one published state of an arrangement. It is immutable.
type Snapshot struct {
	Batches []*batch.Batch
	Since   frontier.Frontier
	Upper   frontier.Frontier
	// Published is false for a placeholder nobody has adopted yet.
	Published bool
	// Dropped is true once the publisher closed the point.
	Dropped bool
}

// Sealed reports whether every update at t is in the snapshot.
func (s *Snapshot) Sealed(t frontier.Time) bool { return s.Published && s.Upper.IsComplete(t) }

// Point is one publication slot. Its fields are guarded by mu; the current
// snapshot is also kept in an atomic pointer so readers load it lock-free.
type Point struct {
	key  Key
	snap atomic.Pointer[Snapshot]

	mu sync.Mutex
	// changed is closed (and replaced) on every publication, waking waiters.
	changed chan struct{}
	// listeners are called after every publication, for worker activation.
	listeners map[uint64]func()
	nextID    uint64

	role     string // publisher's role tag, "" while a placeholder
	tr       *trace.Trace
	shared   *trace.Handle // the readers' collective hold on tr
	standing frontier.Frontier
	readers  *frontier.Holds
	// requested is the since the publisher's own handles ask for; applied
	// is the shared handle's logical frontier, the floor readers may hold.
	requested frontier.Frontier
	applied   frontier.Frontier
	// appliedPhysical is the shared handle's physical frontier, which
	// follows applied: the publisher merges batches freely below it and
	// keeps every batch boundary at or beyond it, so a live reader
	// (Follow) whose hold is at its cursor finds a boundary there.
	appliedPhysical frontier.Frontier
}

func newPoint(k Key) *Point {
	p := &Point{
		key:       k,
		changed:   make(chan struct{}),
		listeners: map[uint64]func(){},
		readers:   frontier.NewHolds(),
		standing:  frontier.Minimum(),
		requested: frontier.Minimum(),
		applied:   frontier.Minimum(),
	}
	p.snap.Store(&Snapshot{Since: frontier.Minimum(), Upper: frontier.Minimum()})
	return p
}

// Key returns the point's key.
func (p *Point) Key() Key { return p.key }

// Snapshot returns the current published state without locking.
func (p *Point) Snapshot() *Snapshot { return p.snap.Load() }

// notifyLocked publishes s and wakes every waiter and listener.
func (p *Point) notifyLocked(s *Snapshot) []func() {
	p.snap.Store(s)
	close(p.changed)
	p.changed = make(chan struct{})
	fns := make([]func(), 0, len(p.listeners))
	for _, fn := range p.listeners {
		fns = append(fns, fn)
	}
	return fns
}

func runAll(fns []func()) {
	for _, fn := range fns {
		fn()
	}
}

// targetLocked is the frontier the shared handle may advance to.
func (p *Point) targetLocked() frontier.Frontier {
	return frontier.Meet(p.standing, p.readers.Frontier())
}

// applyLocked advances the shared handle to the readers' target, logical
// and physical. The shared handle only moves forward.
func (p *Point) applyLocked() error {
	if p.shared == nil {
		return nil
	}
	target := p.targetLocked()
	if target.IsClosed() {
		// No reader and no standing hold left: hold at the publisher's
		// request rather than releasing, so readers that arrive later
		// still find a floor.
		target = p.requested
	}
	if p.applied.Less(target) {
		if err := p.shared.SetLogical(target); err != nil {
			return fmt.Errorf("advance shared hold on %s to %v: %w", p.key, target, err)
		}
		p.applied = target
	}
	return p.applyPhysicalLocked()
}

// applyPhysicalLocked advances the shared handle's physical frontier to
// applied. Without it the handle would pin the physical frontier where the
// point was published, and the publisher's trace would never merge a batch
// again.
func (p *Point) applyPhysicalLocked() error {
	target := p.applied
	if !p.appliedPhysical.Less(target) {
		return nil
	}
	if err := p.shared.SetPhysical(target); err != nil {
		return fmt.Errorf("advance shared physical hold on %s to %v: %w", p.key, target, err)
	}
	p.appliedPhysical = target
	return nil
}

func (p *Point) holdGap(role string) (uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.role != role || p.tr == nil {
		return 0, false
	}
	return gapBetween(p.requested, p.applied), true
}

// StandingHold returns the reading runtime's standing hold.
func (p *Point) StandingHold() frontier.Frontier {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.standing
}

// AdvanceStandingHold raises the reading runtime's standing hold to f (it
// never lowers). The reading runtime calls it when it records a peer export
// (f = the dataflow's as_of) and for every AllowCompaction it applies.
func (r *Registry) AdvanceStandingHold(k Key, f frontier.Frontier) error {
	p := r.point(k)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.standing.Less(f) {
		return nil
	}
	p.standing = f
	return p.applyLocked()
}
